package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/job"
	"github.com/lbbench/lbbench/reports"
)

func newPublishCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "publish RESULTS_DIR SITE_DIR",
		Short: "Build a static site of every run's report",
		Long: `Publish finds every results.json under RESULTS_DIR (for example reports/out)
and writes SITE_DIR: one directory per run with its report.html, exports and
results, and an index.html listing the runs newest first with their date,
scenario, commit and verdicts (index.json lists the same for tools). Links
are relative: copy SITE_DIR to any static host, or open it from disk.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			site, err := reports.Publish(args[0], args[1], job.PublishDoc)
			if err != nil {
				return err
			}
			for _, s := range site.Skipped {
				fmt.Fprintf(cmd.ErrOrStderr(), "lbbench: skipped %s\n", s)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "site: %s (%d runs)\n", filepath.Join(args[1], "index.html"), len(site.Entries))
			return nil
		},
	}
	return cmd
}

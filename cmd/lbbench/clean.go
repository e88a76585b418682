package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/driver/docker"
)

func newCleanCmd() *cobra.Command {
	var all bool
	var session string
	var images bool
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove the containers, networks and volumes lbbench runs left behind",
		Long: `Clean removes the Docker containers (running or not), networks and volumes
labelled lbbench.managed=true whose lbbench process is no longer running: what
a run killed outright (kill -9, a crash, a lost machine) left behind. Runs in
progress keep theirs unless --all is given. "lbbench run --driver docker"
does the same at its start. Images (lbbench:<content hash>) are a cache and
are kept unless --images is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := docker.Connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			rep, err := c.Clean(cmd.Context(), docker.CleanFilter{All: all, Session: session})
			printClean(cmd.OutOrStdout(), rep)
			if err != nil || !images {
				return err
			}
			tags, err := c.RemoveImages(cmd.Context())
			if len(tags) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "lbbench clean: removed %d images: %s\n", len(tags), strings.Join(tags, ", "))
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also remove what lbbench runs still in progress use")
	cmd.Flags().BoolVar(&images, "images", false, "also remove lbbench's images that no container uses")
	cmd.Flags().StringVar(&session, "session", "", "only what one lbbench run made (its session id, printed at its start and recorded in its results)")
	return cmd
}

func printClean(w io.Writer, rep docker.CleanReport) {
	if rep.Empty() {
		fmt.Fprintln(w, "lbbench clean: nothing to remove")
		return
	}
	for _, x := range []struct {
		what  string
		names []string
	}{{"containers", rep.Containers}, {"networks", rep.Networks}, {"volumes", rep.Volumes}} {
		if len(x.names) > 0 {
			fmt.Fprintf(w, "lbbench clean: removed %d %s: %s\n", len(x.names), x.what, strings.Join(x.names, ", "))
		}
	}
}

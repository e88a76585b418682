package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/lbbench/lbbench/scenarios"
)

// version and commit are set at build time with -ldflags "-X main.version=...".
var (
	version = "dev"
	commit  = ""
)

// versionLine is what --version prints: the version, the commit (set at
// build time, else the VCS revision go build recorded, "-dirty" when the
// tree had changes, else "unknown") and the Go version and platform.
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	return versionFrom(version, commit, bi, ok)
}

// versionFrom is versionLine from the build-time version and commit and
// the binary's build information.
func versionFrom(v, c string, bi *debug.BuildInfo, ok bool) string {
	if ok {
		if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version // go install module@version
		}
		if c == "" {
			var dirty bool
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					c = s.Value
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
			if c != "" && dirty {
				c += "-dirty"
			}
		}
	}
	if c == "" {
		c = "unknown"
	}
	return fmt.Sprintf("lbbench %s, commit %s, %s %s/%s", v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "lbbench",
		Short:         "Benchmark how work reaches a server's worker processes",
		Long:          "lbbench brings up worker replicas under several load-balancing topologies,\ndrives them with open-loop load and compares the latency each one delivers.\n\n" + exitStatuses,
		Version:       versionLine(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(
		newRunCmd(),
		newAttackCmd(),
		newServeCmd(),
		newWorkerCmd(),
		newProxyCmd(),
		newGuardCmd(),
		newProbeCmd(),
		newIdleCmd(),
		newStageCmd(),
		newEngineStatsCmd(),
		newCleanCmd(),
		newImageCmd(),
		newReportCmd(),
		newPublishCmd(),
		newCompareCmd(),
		newModelCmd(),
		newSelftestCmd(),
		newVersionCmd(),
		newScenariosCmd(),
	)
	root.InitDefaultCompletionCmd()
	addExamples(root)
	return root
}

// newVersionCmd is "lbbench version": what --version prints.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print lbbench's version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}

// newScenariosCmd is "lbbench scenarios": the built-in scenarios, each
// with its description.
func newScenariosCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "scenarios",
		Short: "List the built-in scenarios (run NAME) with what each one asks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			for _, name := range scenarios.Names() {
				data, err := scenarios.Get(name)
				if err != nil {
					return err
				}
				var s struct {
					Description string `yaml:"description"`
				}
				if err := yaml.Unmarshal(data, &s); err != nil {
					return fmt.Errorf("scenarios: %s: %w", name, err)
				}
				fmt.Fprintf(w, "%s\t%s\n", name, s.Description)
			}
			return w.Flush()
		},
	}
}

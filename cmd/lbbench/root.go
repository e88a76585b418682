package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
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
		Long:          "lbbench brings up worker replicas under several load-balancing topologies,\ndrives them with open-loop load and compares the latency each one delivers.",
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
		newCleanCmd(),
		newReportCmd(),
		newPublishCmd(),
		newCompareCmd(),
		newModelCmd(),
	)
	return root
}

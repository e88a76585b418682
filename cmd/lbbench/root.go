package main

import (
	"github.com/spf13/cobra"
)

// version and commit are set at build time with -ldflags "-X main.version=...".
var (
	version = "dev"
	commit  = ""
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "lbbench",
		Short:         "Benchmark how work reaches a server's worker processes",
		Long:          "lbbench brings up worker replicas under several load-balancing topologies,\ndrives them with open-loop load and compares the latency each one delivers.",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
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

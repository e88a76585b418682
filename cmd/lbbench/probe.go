package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/driver/kube"
	"github.com/spf13/cobra"
)

// newProbeCmd is the hidden command the docker driver runs inside the
// generator container, on the run's network: it waits for a process to
// answer its health URL, or fetches its counters.
func newProbeCmd() *cobra.Command {
	var timeout time.Duration
	var get bool
	cmd := &cobra.Command{
		Use:    "probe URL",
		Short:  "Wait until URL answers 200 (or, with --get, print its body)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if get {
				err = probeGet(cmd.Context(), args[0], timeout, cmd.OutOrStdout())
			} else {
				err = probeReady(cmd.Context(), args[0], timeout)
			}
			if err != nil && driver.TimedOut(err) {
				return &exitError{code: driver.ProbeTimedOut, err: err}
			}
			return err
		},
	}
	cmd.Flags().DurationVar(&timeout, driver.FlagTimeout, 15*time.Second, "give up after this long")
	cmd.Flags().BoolVar(&get, driver.FlagGet, false, "fetch URL once and print its body")
	return cmd
}

// probeReady polls url every 20 ms until it answers 200 or timeout passes.
func probeReady(ctx context.Context, url string, timeout time.Duration) error {
	return driver.WaitHTTP(ctx, url, timeout, nil)
}

// probeGet prints the body of one GET of url, which must answer 200.
func probeGet(ctx context.Context, url string, timeout time.Duration, w io.Writer) error {
	body, err := driver.Fetch(ctx, url, timeout)
	if err != nil {
		return err
	}
	_, err = w.Write(body)
	return err
}

// newIdleCmd is the hidden command the docker driver's generator container
// runs between the commands it execs: it waits for SIGTERM or SIGINT.
func newIdleCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "idle",
		Short:  "Wait until signalled",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			<-cmd.Context().Done()
			fmt.Fprintln(os.Stderr, "lbbench idle: stopping")
			return nil
		},
	}
}

// newStageCmd is the hidden command of the kubernetes driver's init
// container beside a proxy engine: it writes the engine's configuration
// and a copy of this binary into the pod's shared volumes (kube.Stage).
func newStageCmd() *cobra.Command {
	var dir, binary string
	cmd := &cobra.Command{
		Use:    kube.StageSubcommand,
		Short:  "Write a proxy engine's files and a copy of lbbench into a pod's volumes",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			return kube.Stage(os.Getenv(kube.StageEnv), os.Getenv(kube.PodIPEnv), dir, self, binary)
		},
	}
	cmd.Flags().StringVar(&dir, kube.FlagStageDir, kube.EngineWorkDir, "the engine's working directory")
	cmd.Flags().StringVar(&binary, kube.FlagStageBinary, "", "where to copy this binary (none when empty)")
	return cmd
}

// newEngineStatsCmd is the hidden command the kubernetes driver runs in a
// proxy engine's container: it prints the container's CPU and, for
// HAProxy, its stats socket's table as JSON (driver.EngineReport).
func newEngineStatsCmd() *cobra.Command {
	var sock string
	cmd := &cobra.Command{
		Use:    driver.EngineStatsSubcommand,
		Short:  "Print a proxy engine's CPU and counters, from inside its container",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := driver.ReadEngineReport(cmd.Context(), sock)
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
		},
	}
	cmd.Flags().StringVar(&sock, driver.FlagHAProxySocket, "", "HAProxy's stats socket")
	return cmd
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/lbbench/lbbench/driver"
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

// Command lbbench builds load-balancing topologies on real processes, drives
// them with open-loop load and compares the latency they deliver.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/lbbench/lbbench/internal/hardstop"
	"github.com/lbbench/lbbench/job"
)

func main() {
	ctx, stop := interruptContext(os.Stderr)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	os.Exit(exitCode(err))
}

// interruptContext returns the context every command runs under. The first
// SIGINT or SIGTERM cancels it: the command stops what it is doing, asks
// its processes to stop (they get driver.DefaultStopTimeout) and saves
// what it finished. The second ends its hard stop (package hardstop):
// teardown kills at once instead of waiting, still removing everything it
// started. Later signals are ignored, as before. The messages go to stderr
// for SIGINT only: drivers stop their serve, proxy and guard processes with
// SIGTERM, and their logs need no word of it.
func interruptContext(stderr io.Writer) (context.Context, func()) {
	soft, cancelSoft := context.WithCancel(context.Background())
	hard, cancelHard := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for i := 0; i < 2; i++ {
			select {
			case <-done:
				return
			case sig := <-sigs:
				say := sig == os.Interrupt
				if i == 0 {
					if say {
						fmt.Fprintln(stderr, "lbbench: interrupted: stopping (interrupt again to kill at once)")
					}
					cancelSoft()
				} else {
					if say {
						fmt.Fprintln(stderr, "lbbench: interrupted again: killing")
					}
					cancelHard()
				}
			}
		}
	}()
	return hardstop.With(soft, hard), func() {
		signal.Stop(sigs)
		close(done)
		<-finished
		cancelSoft()
		cancelHard()
	}
}

// exitCode maps an error to the process exit status: 0 success, 2 usage or
// infrastructure error, or the code carried by an exitError.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var je *job.Error
	if errors.As(err, &je) {
		fmt.Fprintln(os.Stderr, "lbbench:", je.Err)
		return je.Code
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "lbbench:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "lbbench:", err)
	return 2
}

// exitError carries a specific exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

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
	"time"

	"github.com/lbbench/lbbench/internal/hardstop"
	"github.com/lbbench/lbbench/job"
)

func main() {
	// A reader that goes away (lbbench run ... | head -1) makes writes to
	// the terminal output fail instead of killing the process: the run
	// goes on and its results are still written. A handled signal, unlike
	// an ignored one, is reset for the processes lbbench starts.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := interruptContext(os.Stderr, HardStopGrace, exitNow)
	root := newRootCmd()
	args, err := rootArgs(root, os.Args[1:])
	if err == nil {
		root.SetArgs(args)
		err = root.ExecuteContext(ctx)
	}
	stop()
	os.Exit(exitCode(err))
}

// interruptContext returns the context every command runs under. The first
// SIGINT or SIGTERM cancels it: the command stops what it is doing, asks
// its processes to stop (they get driver.DefaultStopTimeout) and saves
// what it finished. The second ends its hard stop (package hardstop):
// teardown kills at once instead of waiting, still removing everything it
// started. The messages go to stderr
// for SIGINT only: drivers stop their serve, proxy and guard processes with
// SIGTERM, and their logs need no word of it. If the process is still
// running grace after the second signal, or at a third, it calls exit(130)
// whatever it is doing.
func interruptContext(stderr io.Writer, grace time.Duration, exit func(int)) (context.Context, func()) {
	soft, cancelSoft := context.WithCancel(context.Background())
	hard, cancelHard := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var graceOver <-chan time.Time
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-graceOver:
				fmt.Fprintf(stderr, "lbbench: still running %s after the second interrupt: exiting (lbbench clean removes what is left)\n", grace)
				exit(130)
				return
			case sig := <-sigs:
				say := sig == os.Interrupt
				if i == 0 {
					if say {
						fmt.Fprintln(stderr, "lbbench: interrupted: stopping (interrupt again to kill at once)")
					}
					cancelSoft()
				} else if i == 1 {
					if say {
						fmt.Fprintln(stderr, "lbbench: interrupted again: killing (interrupt a third time to exit at once)")
					}
					cancelHard()
					graceOver = time.After(grace)
				} else {
					fmt.Fprintln(stderr, "lbbench: interrupted a third time: exiting")
					exit(130)
					return
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

// HardStopGrace is how long the hard stop after a second interrupt may
// take (killing and removing what the run started) before lbbench exits
// regardless.
const HardStopGrace = 10 * time.Second

// exitNow ends the process at once with code.
func exitNow(code int) { os.Exit(code) }

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

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/internal/files"
	"github.com/lbbench/lbbench/job"
	"github.com/lbbench/lbbench/selftest"
	"github.com/spf13/cobra"
)

// newSelftestCmd is "lbbench selftest": what lbbench itself costs beside
// vegeta, wrk and nginx on this machine.
func newSelftestCmd() *cobra.Command {
	var (
		cfg   selftest.Config
		out   string
		tools selftest.Tools
	)
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Measure lbbench's own cost beside vegeta, wrk and nginx on this machine",
		Long: `Selftest measures what the instrument costs, so that it is known how much
of the machine a run leaves to the servers it measures:

  generators  lbbench attack and vegeta attack at the same open-loop rates
              (--rates) against one fast target (nginx answering 200, or one
              built-in worker where nginx is not installed), the two tools in
              turn, the order alternating round by round; the CPU time
              (user + system, of the whole process) per request, peak RSS,
              latency p99 and lbbench's send-lag p99; lbbench's CPU over
              vegeta's, paired by round, with a skew-safe 95% interval; and
              wrk's closed-loop ceiling (1 thread, 32 connections) there
  servers     the CPU time per request of one built-in worker ("lbbench
              serve --workers 1") with no service and with a 2 ms service,
              and of nginx (one worker), at --server-rate

The proxy's own cost beside nginx and HAProxy is the proxy-overhead
scenario's (lbbench run proxy-overhead).

Tools are found on PATH (vegeta also beside this executable, where "make
bench-self" installs it; nginx also in /usr/sbin); a flag names one, or
"none" leaves out what needs it. It writes results.json (a variant per tool
and rate, a round per repetition; "lbbench compare BASE CAND --metric
cpu_per_request(generator)" compares two builds' figures), figures.txt and
the tools' logs under --out. Ctrl-C stops it and keeps what finished.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			tools.Lbbench = self
			cfg.Tools, err = findTools(cmd, tools)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(out, "results.json")); err == nil {
				return &exitError{code: 2, err: fmt.Errorf("%s holds an earlier results.json: remove it or give another --out", out)}
			}
			cfg.Dir = filepath.Join(out, "runs")
			cfg.Progress = cmd.ErrOrStderr()
			cfg.Version, cfg.Commit = version, commit
			res, runErr := selftest.Run(cmd.Context(), cfg)
			if res == nil {
				return &exitError{code: 2, err: runErr}
			}
			if len(res.Runs) > 0 || res.Error != "" {
				if err := res.WriteFile(filepath.Join(out, "results.json")); err != nil {
					return err
				}
			}
			var text bytes.Buffer
			if err := selftest.Text(&text, selftest.Reduce(res)); err != nil {
				return err
			}
			if err := files.Write(filepath.Join(out, "figures.txt"), text.Bytes()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\n%s\nwritten to %s\n", text.Bytes(), out)
			if runErr != nil {
				if cmd.Context().Err() != nil {
					return &exitError{code: job.ExitInterrupted, err: fmt.Errorf("interrupted: what finished is in %s", out)}
				}
				return runErr
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntSliceVar(&cfg.Rates, "rates", selftest.DefaultRates, "the generators' open-loop rates, requests per second")
	f.IntVar(&cfg.ServerRate, "server-rate", selftest.DefaultServerRate, "the open-loop rate of the servers' runs")
	f.DurationVar(&cfg.Duration, "duration", selftest.DefaultDuration, "each attack's duration")
	f.IntVar(&cfg.Rounds, "rounds", selftest.DefaultRounds, "rounds: every measurement this many times, the tools' order alternating")
	f.StringVarP(&out, "out", "o", "reports/out/selftest", "output directory")
	f.StringVar(&tools.Vegeta, "vegeta", "", `vegeta's executable ("none": leave vegeta out; default: found)`)
	f.StringVar(&tools.Wrk, "wrk", "", `wrk's executable ("none": leave wrk out; default: found)`)
	f.StringVar(&tools.Nginx, "nginx", "", `nginx's executable ("none": target a built-in worker and leave nginx out; default: found)`)
	return cmd
}

// findTools resolves the tools' flags: a path is checked, "" looked up,
// "none" left empty. A tool not found is left out with a note.
func findTools(cmd *cobra.Command, t selftest.Tools) (selftest.Tools, error) {
	var err error
	note := func(tool, how string) {
		fmt.Fprintf(cmd.ErrOrStderr(), "selftest: %s not found (%s); measuring without it\n", tool, how)
	}
	resolve := func(tool, flag string, find func() (string, error), how string) string {
		switch flag {
		case "none":
			return ""
		case "":
			p, e := find()
			if e != nil {
				note(tool, how)
				return ""
			}
			return p
		}
		p, e := exec.LookPath(flag)
		if e != nil && err == nil {
			err = fmt.Errorf("--%s %s: %w", tool, flag, e)
		}
		return p
	}
	t.Vegeta = resolve("vegeta", t.Vegeta, func() (string, error) {
		if p, e := exec.LookPath("vegeta"); e == nil {
			return p, nil
		}
		return exec.LookPath(filepath.Join(filepath.Dir(t.Lbbench), "vegeta"))
	}, `"make bench-self" installs it into bin/`)
	t.Wrk = resolve("wrk", t.Wrk, func() (string, error) { return exec.LookPath("wrk") }, `"make setup" installs it`)
	t.Nginx = resolve("nginx", t.Nginx, func() (string, error) {
		b, e := engines.Find(cmd.Context(), engines.Nginx)
		if e != nil {
			return "", e
		}
		return b.Path, nil
	}, `"make setup" installs it; the target is a built-in worker instead`)
	if err != nil {
		return t, err
	}
	return t, nil
}

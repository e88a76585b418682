package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/lbbench/lbbench/internal/hardstop"
	"github.com/lbbench/lbbench/internal/logtail"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/workloads"
)

// SplitSpec returns the workload generator i of k runs: the arrival scaled
// to 1/k of the load and a seed of its own, so that k generators together
// offer spec's load (k Poisson streams of rate r/k add up to one of rate r).
func SplitSpec(spec workloads.Spec, i, k int) workloads.Spec {
	s := spec
	s.Arrival = spec.Arrival.Scaled(1 / float64(k))
	s.Seed = spec.Seed + uint64(i)*0x632be59bd9b4e019
	return s
}

// ExecFunc runs the lbbench binary with args (an "lbbench attack" command
// line), its standard output and error going to stdout and stderr, and
// waits for it. It returns an error when the command cannot run or exits
// non-zero, and returns promptly once ctx ends (the generator then stops
// sending and exits, or is killed).
type ExecFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// RemoteFunc runs generator i's command like an ExecFunc, with stdin as
// its standard input.
type RemoteFunc func(ctx context.Context, i int, args []string, stdin io.Reader, stdout, stderr io.Writer) error

// Generators offers a workload from K "lbbench attack" processes, each
// carrying 1/K of it (SplitSpec), and merges what they recorded without
// loss. Both drivers launch generators through it: the local driver as
// child processes (LocalExec), the docker driver in its generator
// container.
type Generators struct {
	// K is the number of generator processes; at least 1.
	K int
	// Entry is the base URL load goes to.
	Entry string
	// HostDir is the directory on this machine where each generator's
	// spec, measurement and log go; Dir is the same directory as the
	// generator processes see it (HostDir itself for local processes).
	HostDir, Dir string
	// Exec runs one generator's command.
	Exec ExecFunc
	// Remote, when set, runs generator i's command where no directory is
	// shared with this process (a pod on another node) in place of Exec:
	// its spec goes to its standard input and its measurement comes back
	// on its standard output, kept in HostDir as Exec's would be.
	Remote RemoteFunc
	// Live, when set and K is 1, receives the generator's live figures
	// (LiveStats) as it prints them.
	Live func(LiveStats)
}

// Run offers spec's load and returns the merged measurement. A generator
// that fails is an error naming it, its log and the log's last lines.
func (g Generators) Run(ctx context.Context, spec workloads.Spec) (*results.Measurement, error) {
	k := max(g.K, 1)
	if k > 1 && len(spec.Clients.Named) > 0 {
		return nil, errors.New("loadgen: named clients need a single generator (each owns its connections)")
	}
	if err := os.MkdirAll(g.HostDir, 0o755); err != nil {
		return nil, fmt.Errorf("loadgen: generators: %w", err)
	}
	outs := make([]string, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		s := spec
		if k > 1 {
			s = SplitSpec(spec, i, k)
		}
		data, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("loadgen: generator %d: %w", i, err)
		}
		base := "generator-" + strconv.Itoa(i)
		if err := writeNoFollow(filepath.Join(g.HostDir, base+".spec.json"), data); err != nil {
			return nil, fmt.Errorf("loadgen: generator %d: %w", i, err)
		}
		outs[i] = filepath.Join(g.HostDir, base+".json")
		os.Remove(outs[i]) // a measurement left from an earlier run must not count
		logPath := filepath.Join(g.HostDir, base+".log")
		logf, err := createNoFollow(logPath)
		if err != nil {
			return nil, fmt.Errorf("loadgen: generator %d: %w", i, err)
		}
		cmd := AttackCommand{Target: g.Entry, Spec: g.Dir + "/" + base + ".spec.json", Out: g.Dir + "/" + base + ".json", Quiet: true}
		run := func(ctx context.Context, stderr io.Writer) error { return g.Exec(ctx, cmd.Args(), logf, stderr) }
		if g.Remote != nil {
			cmd.Spec, cmd.Out = "-", ""
			out, err := createNoFollow(outs[i])
			if err != nil {
				logf.Close()
				return nil, fmt.Errorf("loadgen: generator %d: %w", i, err)
			}
			run = func(ctx context.Context, stderr io.Writer) error {
				err := g.Remote(ctx, i, cmd.Args(), bytes.NewReader(data), out, stderr)
				return errors.Join(err, out.Close())
			}
		}
		var stderr io.Writer = logf
		if g.Live != nil && k == 1 {
			// One generator: its live figures are the run's.
			lw := &liveWriter{f: g.Live}
			defer lw.close()
			cmd.Live = true
			stderr = io.MultiWriter(logf, lw)
		}
		wg.Go(func() {
			defer logf.Close()
			if err := run(ctx, stderr); err != nil && ctx.Err() == nil && !allFailed(outs[i]) {
				errs[i] = fmt.Errorf("generator %d: %w%s", i, err, logtail.Format("its log ("+logPath+")", logtail.File(logPath, logtail.DefaultLines)))
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	return MergeFiles(outs)
}

// allFailed reports whether the generator wrote its measurement at path
// and every measured request in it failed: "lbbench attack" then exits 1,
// but for a run that is a result (a target that died: the errors are
// counted and the run judged), not a generator that failed. The file was
// removed before the generator started, so it is this run's.
func allFailed(path string) bool {
	m, err := results.ReadMeasurement(path)
	return err == nil && m.Requests > 0 && m.Errors == m.Requests
}

// LocalExec returns an ExecFunc that runs the lbbench binary at exe as a
// child process in a process group of its own, dying with this process
// (Pdeathsig). When ctx ends it interrupts the group: the generator stops
// sending, writes what it recorded and exits; when ctx's hard stop
// (package hardstop) ends it kills the group.
func LocalExec(exe string) ExecFunc {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		cmd := exec.Command(exe, args...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return err
		}
		stop := context.AfterFunc(ctx, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) })
		defer stop()
		// A hard stop (a second Ctrl-C) does not wait for the generator
		// to write what it recorded: the run is void anyway.
		exited := make(chan struct{})
		defer close(exited)
		if hard := hardstop.Done(ctx); hard != nil {
			go func() {
				select {
				case <-hard:
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				case <-exited:
				}
			}()
		}
		return cmd.Wait()
	}
}

// MergeFiles reads the measurements that generator processes wrote to paths
// and merges them losslessly into one.
func MergeFiles(paths []string) (*results.Measurement, error) {
	var total results.Measurement
	for i, path := range paths {
		m, err := results.ReadMeasurement(path)
		if err != nil {
			return nil, fmt.Errorf("loadgen: generator %d: %w", i, err)
		}
		if err := total.Merge(m); err != nil {
			return nil, fmt.Errorf("loadgen: merge generator %d: %w", i, err)
		}
	}
	total.Generator.Processes = len(paths)
	total.Summarize()
	return &total, nil
}

// createNoFollow creates or truncates path for writing, refusing a
// symbolic link there: HostDir may belong to a container's user (the
// docker driver), and a link planted there must not send this process's
// writes elsewhere.
func createNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
}

// writeNoFollow writes data to path as createNoFollow opens it.
func writeNoFollow(path string, data []byte) error {
	f, err := createNoFollow(path)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

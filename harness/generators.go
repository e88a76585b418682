package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

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

// attackProcesses offers spec's load to entry from k `lbbench attack`
// processes (the lbbench binary at exe), each carrying 1/k of it, and merges
// what they recorded. Their specs and outputs go to dir.
func attackProcesses(ctx context.Context, exe, dir, entry string, spec workloads.Spec, k int) (*results.Measurement, error) {
	if len(spec.Clients.Named) > 0 {
		return nil, errors.New("harness: named clients need a single generator (each owns its connections)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("harness: generators: %w", err)
	}
	cmds := make([]*exec.Cmd, k)
	outs := make([]string, k)
	for i := range k {
		data, err := json.Marshal(SplitSpec(spec, i, k))
		if err != nil {
			return nil, fmt.Errorf("harness: generator %d: %w", i, err)
		}
		specPath := filepath.Join(dir, "generator-"+strconv.Itoa(i)+".spec.json")
		if err := os.WriteFile(specPath, data, 0o644); err != nil {
			return nil, fmt.Errorf("harness: generator %d: %w", i, err)
		}
		outs[i] = filepath.Join(dir, "generator-"+strconv.Itoa(i)+".json")
		logf, err := os.Create(filepath.Join(dir, "generator-"+strconv.Itoa(i)+".log"))
		if err != nil {
			return nil, fmt.Errorf("harness: generator %d: %w", i, err)
		}
		cmd := exec.Command(exe, "attack", "--target", entry, "--spec", specPath, "--out", outs[i], "--quiet")
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		err = cmd.Start()
		logf.Close()
		if err != nil {
			killAll(cmds[:i])
			return nil, fmt.Errorf("harness: start generator %d: %w", i, err)
		}
		cmds[i] = cmd
	}
	// On cancellation, interrupt the generators: they stop sending and
	// exit.
	stop := context.AfterFunc(ctx, func() {
		for _, c := range cmds {
			syscall.Kill(-c.Process.Pid, syscall.SIGINT)
		}
	})
	defer stop()
	var errs []error
	for i, c := range cmds {
		if err := c.Wait(); err != nil && ctx.Err() == nil {
			errs = append(errs, fmt.Errorf("generator %d: %w (log: %s)", i, err, filepath.Join(dir, "generator-"+strconv.Itoa(i)+".log")))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("harness: %w", errors.Join(errs...))
	}
	return MergeFiles(outs)
}

// MergeFiles reads the measurements that generator processes wrote to paths
// and merges them losslessly into one.
func MergeFiles(paths []string) (*results.Measurement, error) {
	var total results.Measurement
	for i, path := range paths {
		m, err := results.ReadMeasurement(path)
		if err != nil {
			return nil, fmt.Errorf("harness: generator %d: %w", i, err)
		}
		if err := total.Merge(m); err != nil {
			return nil, fmt.Errorf("harness: merge generator %d: %w", i, err)
		}
	}
	total.Generator.Processes = len(paths)
	total.Summarize()
	return &total, nil
}

func killAll(cmds []*exec.Cmd) {
	for _, c := range cmds {
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		c.Wait()
	}
}

// Attack offers spec's load to entry from this process, open loop, and
// returns what it recorded: the library behind `lbbench attack`. spec must
// have been through WithDefaults and Validate. raw, if not nil, receives a
// line per measured request (see RawHeader).
func Attack(ctx context.Context, entry string, spec workloads.Spec, raw io.Writer) (*results.Measurement, error) {
	return attack(ctx, entry, spec, raw)
}

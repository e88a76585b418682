package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/lbbench/lbbench/internal/files"
	"github.com/lbbench/lbbench/internal/safepath"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/worker"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// Driver brings plans up on some substrate (local processes, containers).
type Driver interface {
	topologies.Allocator
	// Name is "local" or "docker".
	Name() string
	// Up starts p's processes and returns once all are ready.
	Up(ctx context.Context, p topologies.Plan) (Deployment, error)
}

// Deployment is one running plan.
type Deployment interface {
	// Entry is the base URL load goes to.
	Entry() string
	// Stats collects the per-worker and proxy counters.
	Stats(ctx context.Context) (Stats, error)
	// Down stops everything Up started; it is idempotent.
	Down(ctx context.Context) error
}

// Attacker is a Deployment that offers the load itself, from a vantage
// point of its own (the docker driver's generator container), instead of
// from this process. generators is the number of generator processes to
// split the load across (at least 1).
type Attacker interface {
	Attack(ctx context.Context, spec workloads.Spec, generators int) (*results.Measurement, error)
}

// EnvDescriber is a Driver that adds to the results' environment (the
// docker driver's engine, image and CPU placement).
type EnvDescriber interface {
	DescribeEnv(*results.Env)
}

// Progress reports the scenario's advance to the caller.
type Progress = results.Progress

type config struct {
	progress   func(Progress)
	checkpoint func(*results.Results) error
	version    string
	commit     string
	rawDir     string
	generators int
	exe        string
	workDir    string
	live       func(LiveStats)   // see WithLiveStats in live.go
	builds     map[string]string // see WithBuilds
}

// Option configures Run.
type Option func(*config)

// WithProgress calls f before and after every run, from Run's goroutine.
func WithProgress(f func(Progress)) Option { return func(c *config) { c.progress = f } }

// WithCheckpoint calls f with the results so far after every run, so a
// caller can persist them; an error from f stops the scenario.
func WithCheckpoint(f func(*results.Results) error) Option {
	return func(c *config) { c.checkpoint = f }
}

// WithVersion records lbbench's version and commit in the environment.
func WithVersion(version, commit string) Option {
	return func(c *config) { c.version, c.commit = version, commit }
}

// WithRaw streams one line per measured request of each run into
// dir/<run-id>.csv (see RawHeader). Memory stays constant; the files grow.
func WithRaw(dir string) Option { return func(c *config) { c.rawDir = dir } }

// WithGenerators offers the load from k separate `lbbench attack` processes
// (the lbbench binary at exe), each with 1/k of the rate, and merges their
// histograms losslessly. Their files go under workDir. k <= 1 generates
// in-process.
func WithGenerators(k int, exe, workDir string) Option {
	return func(c *config) { c.generators, c.exe, c.workDir = k, exe, workDir }
}

// WithBuilds maps build names (topologies.Variant.Build) to lbbench
// executables: a variant with a Build runs that executable wherever its
// plan would run the lbbench binary itself. The load generator stays this
// process (or exe of WithGenerators) for every variant: it is the
// instrument, and must not change between the builds compared.
func WithBuilds(builds map[string]string) Option { return func(c *config) { c.builds = builds } }

// Run runs scenario s (already defaulted and validated) on d. It always
// returns the results gathered so far, together with the error that stopped
// it, if any: an interrupted scenario keeps its finished runs.
func Run(ctx context.Context, s scenario.Scenario, d Driver, opts ...Option) (*results.Results, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	res := &results.Results{
		Schema:   results.SchemaVersion,
		Scenario: s,
		Env:      results.CaptureEnv(d.Name(), c.version, c.commit),
		Started:  time.Now(),
	}
	if p, ok := d.(interface{ Pinning() string }); ok {
		res.Env.Pinning = p.Pinning()
	}
	if e, ok := d.(EnvDescriber); ok {
		e.DescribeEnv(&res.Env)
	}
	order := s.Order()
	for r, perm := range order {
		for _, vi := range perm {
			res.Order = append(res.Order, runID(len(res.Order)+1, s.Variants[vi].Name, r+1))
		}
	}
	total := len(res.Order)

	err := func() error {
		// A missing engine fails here, before any run.
		var err error
		if res.Env.Engines, err = engineVersions(ctx, s, d); err != nil {
			return err
		}
		i := 0
		for r, perm := range order {
			for _, vi := range perm {
				i++
				v := s.Variants[vi]
				id := res.Order[i-1]
				if c.progress != nil {
					c.progress(Progress{Index: i, Total: total, ID: id, Variant: v.Name, Rep: r + 1})
				}
				run, err := runOne(ctx, &c, s, v, d, id)
				if run != nil {
					run.Rep = r + 1
					res.Runs = append(res.Runs, *run)
					if c.checkpoint != nil {
						if cerr := c.checkpoint(res); cerr != nil {
							return errors.Join(err, cerr)
						}
					}
				}
				if err != nil {
					return err
				}
				if c.progress != nil {
					c.progress(Progress{Index: i, Total: total, ID: id, Variant: v.Name, Rep: r + 1, Run: run, Done: true})
				}
			}
		}
		return nil
	}()
	res.Finished = time.Now()
	res.Complete = err == nil
	if err != nil {
		res.Error = err.Error()
	}
	if c.checkpoint != nil {
		if cerr := c.checkpoint(res); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	return res, err
}

func runID(i int, variant string, rep int) string {
	return fmt.Sprintf("%03d-%s-r%d", i, variant, rep)
}

// runOne brings variant v up, offers the workload, collects counters and
// takes the variant down, whatever happens. A run interrupted by ctx is not
// returned: a partial run would bias the statistics.
func runOne(ctx context.Context, c *config, s scenario.Scenario, v scenario.Variant, d Driver, id string) (run *results.Run, err error) {
	plan, err := topologies.Render(v, s.Workers, d)
	if err != nil {
		return nil, err
	}
	plan.ID = id
	if v.Build != "" {
		// Another build's binary (lbbench run --baseline) replaces the
		// lbbench binary; other executables (nginx, HAProxy) stay.
		exe, ok := c.builds[v.Build]
		if !ok {
			return nil, fmt.Errorf("harness: %s: no executable for build %q (see WithBuilds)", id, v.Build)
		}
		for i := range plan.Processes {
			if plan.Processes[i].Exe == "" {
				plan.Processes[i].Exe = exe
			}
		}
	}
	spec := s.WorkloadFor(v)
	if spec.Deterministic() && (c.generators > 1 || c.rawDir != "") {
		return nil, fmt.Errorf("harness: %s: a closed-loop or burst workload runs from one generator and has no raw per-request file (drop --generators and --raw)", id)
	}
	upStart := time.Now()
	dep, err := d.Up(ctx, plan)
	if err != nil {
		return nil, err
	}
	bringUp := time.Since(upStart)
	defer func() {
		// Down must run even when ctx is cancelled, with its own deadline;
		// a hard stop (a second Ctrl-C) ends its waits: it kills.
		downCtx, cancel := TeardownContext(ctx, 2*DefaultStopTimeout)
		defer cancel()
		downStart := time.Now()
		if derr := dep.Down(downCtx); derr != nil {
			err = errors.Join(err, derr)
		}
		if run != nil {
			run.TearDown = time.Since(downStart)
		}
	}()

	started := time.Now()
	var m *results.Measurement
	if a, ok := dep.(Attacker); ok {
		m, err = a.Attack(withLiveStats(ctx, c.live), spec, max(1, c.generators))
	} else if c.generators > 1 {
		dir, perr := safepath.Join(c.workDir, id)
		if perr != nil {
			return nil, fmt.Errorf("harness: %s: generators: %w", id, perr)
		}
		m, err = Generators{K: c.generators, Entry: dep.Entry(), HostDir: dir, Dir: dir, Exec: LocalExec(c.exe)}.Run(ctx, spec)
	} else {
		var raw *files.File
		if c.rawDir != "" {
			if err := os.MkdirAll(c.rawDir, 0o755); err != nil {
				return nil, fmt.Errorf("harness: %s: raw: %w", id, err)
			}
			rawPath, perr := safepath.Join(c.rawDir, id+".csv")
			if perr != nil {
				return nil, fmt.Errorf("harness: %s: raw: %w", id, perr)
			}
			if raw, err = files.Create(rawPath); err != nil {
				return nil, fmt.Errorf("harness: %s: raw: %w", id, err)
			}
			defer raw.Close()
		}
		m, err = attack(withLiveStats(ctx, c.live), dep.Entry(), spec, rawWriter(raw))
		if raw != nil {
			if cerr := raw.Commit(); cerr != nil && err == nil {
				err = fmt.Errorf("raw: %w", cerr)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("harness: %s: attack: %w", id, err)
	}
	if err := fitBursts(m.Bursts, s.Workers.Count); err != nil {
		return nil, err
	}
	stats, err := dep.Stats(ctx)
	if err != nil && (len(stats.Dead) == 0 || ctx.Err() != nil) {
		return nil, err
	}
	run = &results.Run{ID: id, Variant: v.Name, Started: started, Entry: dep.Entry(), BringUp: bringUp, Measurement: *m, Proxy: stats.Proxy, Engine: stats.Engine}
	run.Summary = run.Latency.Summarize()
	judge(run, s.Validity)
	if len(stats.Dead) > 0 {
		// A failed run is a result: recorded, invalid, and the scenario
		// goes on. The counters of the processes still alive are kept; an
		// error reading them is one more reason.
		run.Failed = stats.Dead
		run.Valid = false
		var why []string
		for _, f := range stats.Dead {
			why = append(why, "failed: "+f.String())
		}
		if err != nil {
			why = append(why, "failed: "+err.Error())
		}
		run.Invalid = append(why, run.Invalid...)
	}
	run.Workers = workerResults(s.Workers.Count, m.ByWorker, stats.Workers)
	return run, nil
}

// rawWriter returns f as an io.Writer, or nil for no file (not a non-nil
// interface holding a nil *os.File).
func rawWriter(f *files.File) io.Writer {
	if f == nil {
		return nil
	}
	return f
}

// workerResults joins the client's per-worker response counts with the
// workers' own counters.
func workerResults(n int, responses map[int]uint64, stats []worker.Stats) []results.Worker {
	out := make([]results.Worker, n)
	for i := range out {
		out[i] = results.Worker{Index: i, Responses: responses[i]}
	}
	for _, st := range stats {
		if st.Index >= 0 && st.Index < n {
			w := &out[st.Index]
			w.Requests, w.Connections, w.MaxQueue = st.Requests, st.Connections, st.MaxQueue
		}
	}
	return out
}

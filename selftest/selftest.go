package selftest

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/lbbench/lbbench/internal/proccpu"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// Tools are the programs the self-benchmark runs; an empty path leaves
// out what needs it (vegeta: the generator's ratio; wrk: the closed-loop
// ceiling; nginx: the fast target, replaced by a built-in worker, and the
// server comparison).
type Tools struct {
	Lbbench, Vegeta, Wrk, Nginx string
}

// Config is one self-benchmark.
type Config struct {
	Tools Tools
	// Rates are the generators' open-loop rates, requests per second.
	Rates []int
	// ServerRate is the open-loop rate of the servers' CPU runs.
	ServerRate int
	// Duration is each attack's.
	Duration time.Duration
	// Rounds is how many times every measurement is made, the tools in
	// alternating order.
	Rounds int
	// Dir holds the tools' files and logs.
	Dir string
	// Progress gets a line per measurement.
	Progress io.Writer
	// Version and Commit identify this lbbench in the results' Env.
	Version, Commit string
}

// Defaults for Config's zero fields.
var (
	DefaultRates      = []int{1000, 5000, 10000, 20000}
	DefaultServerRate = 1000
	DefaultDuration   = 5 * time.Second
	DefaultRounds     = 3
)

// Variant names of the results: generator runs are TOOL@RATE; server
// runs SERVER@RATE.
const (
	ToolLbbench = "lbbench"
	ToolVegeta  = "vegeta"
	ToolWrk     = "wrk"

	ServerBuiltin0 = "builtin-0ms"
	ServerBuiltin2 = "builtin-2ms"
	ServerNginx    = "nginx"
)

func (c *Config) defaults() error {
	if c.Tools.Lbbench == "" {
		return errors.New("selftest: no lbbench to measure")
	}
	if len(c.Rates) == 0 {
		c.Rates = DefaultRates
	}
	if c.ServerRate == 0 {
		c.ServerRate = DefaultServerRate
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Rounds == 0 {
		c.Rounds = DefaultRounds
	}
	for _, r := range append([]int{c.ServerRate}, c.Rates...) {
		if r <= 0 || r > 1_000_000 {
			return fmt.Errorf("selftest: rate %d: want 1 to 1000000 requests per second", r)
		}
	}
	if c.Duration < 100*time.Millisecond || c.Duration > 10*time.Minute {
		return fmt.Errorf("selftest: duration %s: want 100ms to 10m", c.Duration)
	}
	if c.Rounds < 1 || c.Rounds > 100 {
		return fmt.Errorf("selftest: rounds %d: want 1 to 100", c.Rounds)
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	// nginx takes its configuration's paths from its prefix: the
	// directory must not be relative.
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return fmt.Errorf("selftest: %w", err)
	}
	c.Dir = dir
	return nil
}

// Run makes the self-benchmark: the results (a run per measurement, in
// the order made; complete unless ctx ended it or a tool failed, the
// error then saying why) are returned either way, for the caller to
// write.
func Run(ctx context.Context, cfg Config) (*results.Results, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	res := &results.Results{Schema: results.SchemaVersion, Started: time.Now().UTC()}
	res.Scenario = scenarioOf(cfg)
	res.Env = results.CaptureEnv("local", cfg.Version, cfg.Commit)
	err := run(ctx, cfg, res)
	res.Finished = time.Now().UTC()
	res.Complete = err == nil
	if err != nil {
		res.Error = err.Error()
	}
	return res, err
}

// scenarioOf describes what cfg measures as a scenario's variants, so
// that results readers (compare, report) know its runs.
func scenarioOf(cfg Config) scenario.Scenario {
	s := scenario.Scenario{Name: "selftest", Description: "lbbench's own cost beside vegeta, wrk and nginx on this machine"}
	add := func(name string) {
		s.Variants = append(s.Variants, scenario.Variant{Name: name, Topology: scenario.ReusePort})
	}
	for _, r := range cfg.Rates {
		add(variant(ToolLbbench, r))
		if cfg.Tools.Vegeta != "" {
			add(variant(ToolVegeta, r))
		}
	}
	if cfg.Tools.Wrk != "" {
		add(ToolWrk)
	}
	add(variant(ServerBuiltin0, cfg.ServerRate))
	add(variant(ServerBuiltin2, cfg.ServerRate))
	if cfg.Tools.Nginx != "" {
		add(variant(ServerNginx, cfg.ServerRate))
	}
	s.Repeat = cfg.Rounds
	return s
}

func variant(name string, rate int) string { return name + "@" + strconv.Itoa(rate) }

func run(ctx context.Context, cfg Config, res *results.Results) error {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("selftest: %w", err)
	}
	if err := generators(ctx, cfg, res); err != nil {
		return err
	}
	return servers(ctx, cfg, res)
}

// generators measures the tools against the fast target, round by round,
// lbbench and vegeta in turn first.
func generators(ctx context.Context, cfg Config, res *results.Results) error {
	var target *server
	var err error
	if cfg.Tools.Nginx != "" {
		target, err = startNginx(ctx, cfg.Tools.Nginx, cfg.Dir)
	} else {
		target, err = startBuiltin(ctx, cfg.Tools.Lbbench, cfg.Dir)
	}
	if err != nil {
		return err
	}
	defer target.c.stop()
	url := target.base + "/work?ms=0"
	fmt.Fprintf(cfg.Progress, "selftest: generators against %s (%s), %s an attack, %d rounds\n", target.name, url, cfg.Duration, cfg.Rounds)
	for round := 1; round <= cfg.Rounds; round++ {
		for i, rate := range cfg.Rates {
			tools := []string{ToolLbbench}
			if cfg.Tools.Vegeta != "" {
				tools = append(tools, ToolVegeta)
				if (round+i)%2 == 0 {
					tools[0], tools[1] = tools[1], tools[0]
				}
			}
			for _, tool := range tools {
				if err := target.c.exited(); err != nil {
					return err
				}
				r, err := attack(ctx, cfg, variant(tool, rate), tool, url, rate, round)
				if err != nil {
					return err
				}
				r.Entry = target.name
				res.Runs = append(res.Runs, r)
				fmt.Fprintf(cfg.Progress, "selftest: round %d: %s at %d/s: %s\n", round, tool, rate, line(r))
			}
		}
		if cfg.Tools.Wrk != "" {
			r, err := wrk(ctx, cfg, url, round)
			if err != nil {
				return err
			}
			r.Entry = target.name
			res.Runs = append(res.Runs, r)
			fmt.Fprintf(cfg.Progress, "selftest: round %d: wrk closed loop: %s\n", round, line(r))
		}
	}
	return nil
}

// line is a run's progress line.
func line(r results.Run) string {
	us := float64(generatorCPU(r)) / 1e3 / float64(max(r.Requests, 1))
	return fmt.Sprintf("%d requests (%.0f/s), %d errors, %.1f µs CPU a request, p99 %s, RSS %d MB",
		r.Requests, r.AchievedRate, r.Errors, us, r.Summary.P99, r.Generator.MaxRSS>>20)
}

func generatorCPU(r results.Run) time.Duration {
	for _, p := range r.CPU {
		if p.Role == results.RoleGenerator {
			return p.Time
		}
	}
	return 0
}

// attack runs one tool's attack at rate and returns it as a run.
// Its files are under cfg.Dir in a directory named by the run's ID,
// r<round>-<variant>.
func attack(ctx context.Context, cfg Config, name, tool, url string, rate, round int) (results.Run, error) {
	id := fmt.Sprintf("r%d-%s", round, name)
	dir := filepath.Join(cfg.Dir, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return results.Run{}, fmt.Errorf("selftest: %w", err)
	}
	log := filepath.Join(dir, "attack.log")
	r := results.Run{ID: id, Variant: name, Rep: round, Started: time.Now().UTC(), Valid: true}
	secs := strconv.FormatFloat(cfg.Duration.Seconds(), 'f', -1, 64) + "s"
	switch tool {
	case ToolLbbench:
		out := filepath.Join(dir, "measurement.json")
		u, err := runToEnd(ctx, log, nil, cfg.Tools.Lbbench, "attack", "-q", "--target", url, "--rate", strconv.Itoa(rate), "--duration", secs, "-o", out)
		if err != nil {
			return r, err
		}
		m, err := results.ReadMeasurement(out)
		if err != nil {
			return r, err
		}
		r.Measurement = *m
		r.Generator.MaxRSS = u.maxRSS
		r.CPU = []results.ProcessCPU{{Role: results.RoleGenerator, Name: "lbbench attack", Worker: -1, Time: u.cpu}}
	case ToolVegeta:
		targets := filepath.Join(dir, "targets.txt")
		if err := os.WriteFile(targets, []byte("GET "+url+"\n"), 0o644); err != nil {
			return r, fmt.Errorf("selftest: %w", err)
		}
		bin := filepath.Join(dir, "results.bin")
		u, err := runToEnd(ctx, log, nil, cfg.Tools.Vegeta, "attack", "-targets="+targets, "-rate="+strconv.Itoa(rate)+"/1s", "-duration="+secs, "-output="+bin)
		if err != nil {
			return r, err
		}
		var csvOut bytes.Buffer
		if _, err := runToEnd(ctx, log, &csvOut, cfg.Tools.Vegeta, "encode", "-to=csv", bin); err != nil {
			return r, err
		}
		m, err := vegetaMeasurement(&csvOut, cfg.Duration)
		if err != nil {
			return r, fmt.Errorf("selftest: vegeta's results of %s: %w", id, err)
		}
		m.IntendedRate = float64(rate)
		m.Generator.MaxRSS = u.maxRSS
		m.Generator.CPU = u.cpu
		m.Generator.Processes = 1
		r.Measurement = *m
		r.CPU = []results.ProcessCPU{{Role: results.RoleGenerator, Name: "vegeta attack", Worker: -1, Time: u.cpu}}
	default:
		return r, fmt.Errorf("selftest: no tool %q", tool)
	}
	r.Summary = r.Latency.Summarize()
	return r, nil
}

// vegetaMeasurement reads vegeta's CSV results (vegeta encode -to=csv:
// timestamp, code, latency in ns, ...): their count, errors (a code other
// than 2xx) and latencies, measured by vegeta from each request's actual
// send.
func vegetaMeasurement(r io.Reader, d time.Duration) (*results.Measurement, error) {
	m := &results.Measurement{Duration: d, Latency: results.NewHistogram()}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("a row of %d fields, want at least 3: %q", len(rec), rec)
		}
		code, err1 := strconv.Atoi(rec[1])
		ns, err2 := strconv.ParseInt(rec[2], 10, 64)
		if err1 != nil || err2 != nil || ns < 0 {
			return nil, fmt.Errorf("a row with code %q and latency %q", rec[1], rec[2])
		}
		m.Requests++
		if code < 200 || code > 299 {
			m.Errors++
			continue
		}
		m.Latency.RecordDuration(time.Duration(ns))
	}
	if m.Requests == 0 {
		return nil, errors.New("no request")
	}
	m.AchievedRate = float64(m.Requests) / d.Seconds()
	return m, nil
}

// wrkRequests reads "N requests in" from wrk's summary.
var wrkRequests = regexp.MustCompile(`(?m)^\s*(\d+) requests in `)

// wrk runs wrk's closed loop (one thread, 32 connections) on url.
func wrk(ctx context.Context, cfg Config, url string, round int) (results.Run, error) {
	id := fmt.Sprintf("r%d-%s", round, ToolWrk)
	dir := filepath.Join(cfg.Dir, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return results.Run{}, fmt.Errorf("selftest: %w", err)
	}
	r := results.Run{ID: id, Variant: ToolWrk, Rep: round, Started: time.Now().UTC(), Valid: true}
	secs := strconv.Itoa(max(1, int(cfg.Duration.Round(time.Second)/time.Second))) + "s"
	var out bytes.Buffer
	u, err := runToEnd(ctx, filepath.Join(dir, "wrk.log"), &out, cfg.Tools.Wrk, "-t1", "-c32", "-d"+secs, url)
	os.WriteFile(filepath.Join(dir, "wrk.txt"), out.Bytes(), 0o644)
	if err != nil {
		return r, err
	}
	mm := wrkRequests.FindSubmatch(out.Bytes())
	if mm == nil {
		return r, fmt.Errorf("selftest: wrk's output has no request count:\n%s", out.String())
	}
	n, _ := strconv.ParseUint(string(mm[1]), 10, 64)
	d, _ := time.ParseDuration(secs)
	r.Measurement = results.Measurement{Duration: d, Requests: n, Latency: results.NewHistogram(), Closed: true}
	r.AchievedRate = float64(n) / d.Seconds()
	r.Generator.MaxRSS = u.maxRSS
	r.CPU = []results.ProcessCPU{{Role: results.RoleGenerator, Name: "wrk", Worker: -1, Time: u.cpu}}
	return r, nil
}

// servers measures the servers' CPU per request at cfg.ServerRate, driven
// by lbbench attack: a built-in worker with no service and with 2 ms, and
// nginx, in an order that turns round by round.
func servers(ctx context.Context, cfg Config, res *results.Results) error {
	type kind struct {
		name string
		ms   int
	}
	kinds := []kind{{ServerBuiltin0, 0}, {ServerBuiltin2, 2}}
	if cfg.Tools.Nginx != "" {
		kinds = append(kinds, kind{ServerNginx, 0})
	}
	fmt.Fprintf(cfg.Progress, "selftest: servers at %d/s, %s a run, %d rounds\n", cfg.ServerRate, cfg.Duration, cfg.Rounds)
	for round := 1; round <= cfg.Rounds; round++ {
		for j := range kinds {
			k := kinds[(j+round-1)%len(kinds)]
			r, err := serverRun(ctx, cfg, k.name, k.ms, round)
			if err != nil {
				return err
			}
			res.Runs = append(res.Runs, r)
			us := 0.0
			if n := r.Requests + r.WarmupRequests; n > 0 {
				us = float64(r.CPU[len(r.CPU)-1].Time) / 1e3 / float64(n)
			}
			fmt.Fprintf(cfg.Progress, "selftest: round %d: %s at %d/s: %d requests, %.1f µs of server CPU a request\n", round, k.name, cfg.ServerRate, r.Requests, us)
		}
	}
	return nil
}

// serverRun starts one server, attacks it for cfg.Duration and returns the
// run with the server's CPU time over the attack (its whole process
// tree: for the built-in worker the serve supervisor and its worker, for
// nginx its master and worker).
func serverRun(ctx context.Context, cfg Config, name string, ms, round int) (results.Run, error) {
	v := variant(name, cfg.ServerRate)
	id := fmt.Sprintf("r%d-%s", round, v)
	dir := filepath.Join(cfg.Dir, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return results.Run{}, fmt.Errorf("selftest: %w", err)
	}
	var s *server
	var err error
	if name == ServerNginx {
		s, err = startNginx(ctx, cfg.Tools.Nginx, dir)
	} else {
		s, err = startBuiltin(ctx, cfg.Tools.Lbbench, dir)
	}
	if err != nil {
		return results.Run{}, err
	}
	defer s.c.stop()
	before, err := proccpu.Tree(s.c.cmd.Process.Pid)
	if err != nil {
		return results.Run{}, err
	}
	r, err := attack(ctx, cfg, v, ToolLbbench, s.base+"/work?ms="+strconv.Itoa(ms), cfg.ServerRate, round)
	if err != nil {
		return r, err
	}
	after, err := proccpu.Tree(s.c.cmd.Process.Pid)
	if err != nil {
		return r, fmt.Errorf("selftest: %s's CPU time after the attack: %w", s.name, err)
	}
	if err := s.c.exited(); err != nil {
		return r, err
	}
	r.Entry = s.name
	r.CPU = append(r.CPU, results.ProcessCPU{Role: results.RoleWorkers, Name: s.name, Worker: 0, Time: after - before})
	return r, nil
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lbbench/lbbench/internal/files"
	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
)

type attackOptions struct {
	target        string
	targets       string
	spec          string
	scenario      string
	out           string
	format        string
	raw           string
	workloadFlags // --duration, --warmup, --rate
	insecure      bool
	quiet         bool
	live          bool
	inFlight      int
	// vegeta's flags (see vegetaflags.go)
	headers       []string
	body          string
	name          string
	timeout       time.Duration
	connections   int
	keepAlive     bool
	maxBody       int64
	targetsFormat string
	stdin         io.Reader
	// stdinHasData says whether standard input is a pipe or a file (not a
	// terminal or /dev/null): targets may be waiting there.
	stdinHasData bool
}

// literalRate is the rate of an attack on literal targets when neither
// --rate nor a scenario gives one: vegeta's default, 50/1s.
const literalRate = 50

func newAttackCmd() *cobra.Command {
	var o attackOptions
	cmd := &cobra.Command{
		Use:   "attack [--target URL | --targets FILE | < targets] [SCENARIO | --spec FILE]",
		Short: "Offer a workload open-loop to one URL and write the histograms",
		Long: `Attack is the load generator on its own: it offers a workload open loop,
measuring latency from each request's intended send time, and writes what
it recorded (HDR histograms, counts, intervals) as JSON to --out, or, with
--format vegeta, vegeta's results that "vegeta report" and "vegeta plot"
read. "lbbench run --generators K" starts K of these and merges their
histograms.

What is sent:
  --target http://host:port          the workload's request classes, their
                                     paths appended to this base URL
  --target http://host:port/p?q=1    this URL as given (a path other than /
                                     or a query makes it a literal target)
  --targets FILE, or targets on      vegeta's http format: "METHOD URL",
  standard input                     header lines, "@body-file", a blank
                                     line between targets; sent round robin
Literal targets must share one scheme, host and port. --target and targets
on standard input together are refused (say which you mean). Literal
targets are sent at a constant rate (vegeta's pacing), 50/1s, with no
warm-up, unless --rate, --warmup or a named scenario or spec say otherwise.

The workload (rate, duration, connections, timeout) comes from a scenario
(a file or a built-in name; its workload section, default "default") or
from --spec, a workload spec in YAML or JSON. --duration 0 runs until
interrupted, and so do literal targets without --duration, a scenario or a
spec, as in vegeta; Ctrl-C then writes what was recorded and exits 0.

vegeta's spellings: attack takes vegeta attack's command lines as vegeta's
README writes them: single-dash long flags (-rate=50/1s -duration=5s
-targets=FILE), -format json (vegeta's JSON targets; --targets-format
here), -header/-H, -body, -name, -timeout, -connections, -keepalive,
-max-body, -output, -insecure. A command line with a single-dash long flag
writes vegeta's gob results, as vegeta attack does, unless --format says
otherwise. vegeta flags attack does not take are refused with the reason.

Exit status: 0, or 1 when every measured request failed, 2 for bad input,
130 when interrupted during a timed run (what was recorded is written).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.scenario = args[0]
			}
			if o.targets == "stdin" {
				o.targets = "-" // vegeta's name for standard input
			}
			o.stdin = cmd.InOrStdin()
			o.stdinHasData = stdinHasData(o.stdin)
			return runAttack(cmd.Context(), o, cmd.Flags().Changed, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.target, loadgen.FlagTarget, "", "`URL` to attack: a base URL (http://127.0.0.1:8080) for the workload's classes, or a URL with a path or query sent as given")
	f.StringVar(&o.targets, "targets", "", "read targets in vegeta's http format from `FILE` (\"-\": standard input)")
	f.StringVar(&o.spec, loadgen.FlagSpec, "", "workload spec `FILE` (YAML or JSON; - for standard input) instead of a scenario")
	f.StringVarP(&o.out, loadgen.FlagOut, "o", "", "write the results to `FILE` (default: standard output; vegeta's -output too)")
	f.StringVar(&o.format, "format", loadgen.FormatLbbench, "results format: lbbench (measurement JSON), vegeta (vegeta's gob, what \"vegeta attack\" writes), vegeta-json or vegeta-csv (vegeta's JSON lines or CSV); vegeta's -format is --targets-format")
	f.StringVar(&o.targetsFormat, "targets-format", loadgen.TargetsHTTP, "format of --targets and standard input: http (\"METHOD URL\", header lines, @body) or json (a JSON object a line: method, url, header, body in base64), as vegeta's -format")
	f.StringArrayVarP(&o.headers, "header", "H", nil, "add the request `HEADER`, written \"NAME: VALUE\", to every request (repeatable)")
	f.StringVar(&o.body, "body", "", "request body `FILE` of every literal target that has none of its own")
	f.StringVar(&o.name, "name", "", "the attack's `NAME` in vegeta's results (vegeta report and plot group by it)")
	f.DurationVar(&o.timeout, "timeout", 0, "request timeout (overrides the workload's; vegeta's default is 30s)")
	f.IntVar(&o.connections, "connections", 0, "client connections the generator opens, each carrying one request at a time (overrides the workload's)")
	f.BoolVar(&o.keepAlive, "keepalive", true, "reuse client connections; --keepalive=false opens one per request (overrides the workload's)")
	f.Int64Var(&o.maxBody, "max-body", 0, fmt.Sprintf("`BYTES` of each response body vegeta's results keep (0: none; -1: as many as lbbench keeps, %d)", loadgen.MaxBodyCap))
	f.StringVar(&o.raw, "raw", "", "also write lbbench's per-request CSV (intended time, send lag, corrected latency, ...; not vegeta's CSV, see --format vegeta-csv) to `FILE`")
	f.Var(&o.rate, "rate", "intended rate: requests per second (960) or per duration like vegeta (50/1s, 1/100ms); overrides the workload's constant or poisson rate")
	f.DurationVar(&o.duration, "duration", 0, "measured duration, 0 for until interrupted (overrides the workload)")
	f.DurationVar(&o.warmup, "warmup", 0, "warm-up, not recorded; 0 for none (overrides the workload)")
	f.IntVar(&o.inFlight, "max-in-flight", 0, "most requests outstanding at once; requests due beyond it leave late (send lag) (default: derived from the workload, see clients.max_in_flight)")
	f.BoolVarP(&o.insecure, "insecure", "k", false, "do not verify an https target's certificate")
	f.BoolVarP(&o.quiet, loadgen.FlagQuiet, "q", false, "no summary on standard error")
	f.BoolVar(&o.live, loadgen.FlagLive, false, "print the live figures (loadgen.LiveStats) as a JSON line per second on standard error")
	f.SetNormalizeFunc(normalizeAttack)
	return cmd
}

// stdinHasData says whether r is a pipe or a regular file: targets may be
// waiting there. A terminal or a device such as /dev/null is not.
func stdinHasData(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return r != nil
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&(os.ModeNamedPipe|os.ModeCharDevice|os.ModeDevice|os.ModeSocket) == os.ModeNamedPipe || fi.Mode().IsRegular()
}

// rateFlag is --rate, for attack, run and model sim alike: a number per
// second or vegeta's count per duration (workloads.ParseRate).
type rateFlag struct{ perSec workloads.Rate }

func (r *rateFlag) String() string {
	if r.perSec == 0 {
		return ""
	}
	return r.perSec.String()
}

func (r *rateFlag) Type() string { return "RATE" }

func (r *rateFlag) Set(v string) error {
	rate, err := workloads.ParseRate(v)
	if err != nil {
		return err
	}
	r.perSec = rate
	return nil
}

func runAttack(ctx context.Context, o attackOptions, changed func(string) bool, stdout, stderr io.Writer) (err error) {
	entry, opts, err := o.config().Resolve()
	if err != nil {
		return fmt.Errorf("attack: %w", err)
	}
	opts.OwnProcess = true // this process is the generator: GOMAXPROCS follows the rate
	literal := len(opts.Targets) > 0
	spec, err := attackWorkload(o, literal)
	if err != nil {
		return err
	}
	ov := o.overrides(changed, literal)
	if err := ov.Apply(&spec); err != nil {
		return fmt.Errorf("attack: %w", err)
	}
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("attack: workload: %w", err)
	}
	forever := ov.UntilInterrupted
	if forever && !changed("duration") && !o.quiet {
		fmt.Fprintln(stderr, "attack: no --duration: running until interrupted, as vegeta does (Ctrl-C writes the results)")
	}

	if o.raw != "" {
		f, err := files.Create(o.raw)
		if err != nil {
			return fmt.Errorf("attack: --raw: %w", err)
		}
		defer f.Close()
		opts.Raw = f
		// Committed whatever the attack's outcome: an interrupted attack's
		// lines are kept, as its measurement is.
		defer func() {
			if cerr := f.Commit(); cerr != nil && err == nil {
				err = fmt.Errorf("attack: --raw: %w", cerr)
			}
		}()
	}
	// The results file is opened first so a bad path fails before the
	// attack, and vegeta's formats stream into it as requests end.
	out, err := openResults(o, stdout)
	if err != nil {
		return err
	}
	defer out.close()
	if out.enc != nil {
		opts.Results = out.encode
	}
	if o.live {
		enc := json.NewEncoder(stderr)
		ctx = loadgen.LiveContext(ctx, func(ls loadgen.LiveStats) { enc.Encode(ls) })
	}
	m, attackErr := loadgen.Attack(ctx, entry, spec, opts)
	if forever && attackErr != nil && ctx.Err() != nil {
		attackErr = nil // the way a run until interrupted ends
	}
	if m == nil {
		return attackErr
	}
	if err := out.finish(m); err != nil {
		return errors.Join(attackErr, err)
	}
	if !o.quiet {
		s := m.Latency.Summarize()
		fmt.Fprintf(stderr, "attack: %d requests at %.1f/s (intended %.1f/s), %d errors; p50 %s p99 %s p99.9 %s max %s; send lag p99 %s; generator CPU %s, max RSS %.1f MiB; in flight peak %d of %d, %d held\n",
			m.Requests, m.AchievedRate, m.IntendedRate, m.Errors, numfmt.Dur(s.P50), numfmt.Dur(s.P99), numfmt.Dur(s.P999), numfmt.Dur(s.Max),
			numfmt.Dur(m.SendLag.Quantile(0.99)), m.Generator.CPU.Round(time.Millisecond), float64(m.Generator.MaxRSS)/(1<<20), m.Generator.PeakInFlight, m.Generator.MaxInFlight, m.Generator.Held)
	}
	if attackErr != nil && ctx.Err() != nil {
		return &exitError{code: 130, err: fmt.Errorf("interrupted: partial measurement written")}
	}
	if attackErr == nil && m.Requests > 0 && m.Errors == m.Requests {
		return &exitError{code: 1, err: fmt.Errorf("attack: every one of the %d measured requests failed (%s): results written, but nothing succeeded", m.Requests, results.ErrorKindsString(m.ErrorKinds))}
	}
	return attackErr
}

// config is what the flags say of the attack beside its workload.
func (o attackOptions) config() loadgen.AttackConfig {
	return loadgen.AttackConfig{
		Target: o.target, Targets: o.targets, TargetsFormat: o.targetsFormat,
		Stdin: o.stdin, StdinHasData: o.stdinHasData, SpecOnStdin: o.spec == "-",
		Headers: o.headers, Body: o.body, MaxBody: o.maxBody, Format: o.format,
		Insecure: o.insecure, Name: o.name,
	}
}

// overrides are the flags' adjustments of the workload. --duration 0
// runs until interrupted, and so do literal targets without --duration,
// a scenario or a spec, as vegeta's do.
func (o attackOptions) overrides(changed func(string) bool, literal bool) workloads.Overrides {
	ov := o.workloadFlags.of(changed)
	if (changed("duration") && o.duration == 0) || (literal && !changed("duration") && !o.namesWorkload()) {
		ov.Duration, ov.UntilInterrupted = nil, true
	}
	if changed("timeout") {
		ov.Timeout = &o.timeout
	}
	if changed("connections") {
		ov.Connections = &o.connections
	}
	if changed("keepalive") {
		ov.KeepAlive = &o.keepAlive
	}
	if changed("max-in-flight") {
		ov.MaxInFlight = &o.inFlight
	}
	return ov
}

// namesWorkload says whether a scenario or a spec was given.
func (o attackOptions) namesWorkload() bool { return o.spec != "" || o.scenario != "" }

// resultsOut is where attack's results go: lbbench's measurement as JSON
// (to -o or standard output, written at the end), or one of vegeta's
// encodings, streamed as requests end.
type resultsOut struct {
	path   string
	stdout io.Writer
	file   *files.File // -o for vegeta's formats, committed by finish
	bw     *bufio.Writer
	enc    vegeta.Encoder
	err    error // the first encoding error
}

// openResults opens -o for vegeta's formats, so a bad path fails before
// the attack starts.
func openResults(o attackOptions, stdout io.Writer) (*resultsOut, error) {
	r := &resultsOut{path: o.out, stdout: stdout}
	if o.format == loadgen.FormatLbbench {
		return r, nil
	}
	out := stdout
	if o.out != "" {
		f, err := files.Create(o.out)
		if err != nil {
			return nil, fmt.Errorf("attack: -o: %w", err)
		}
		r.file, out = f, f
	}
	r.bw = bufio.NewWriterSize(out, 64<<10)
	r.enc = loadgen.ResultsEncoder(o.format, r.bw)
	return r, nil
}

// encode writes one vegeta result; after an error it drops the rest.
func (r *resultsOut) encode(res *vegeta.Result) {
	if r.err == nil {
		r.err = r.enc.Encode(res)
	}
}

// finish writes lbbench's measurement, or completes the vegeta stream.
func (r *resultsOut) finish(m *results.Measurement) error {
	switch {
	case r.bw != nil:
		if err := errors.Join(r.err, r.bw.Flush()); err != nil {
			return fmt.Errorf("attack: write results: %w", err)
		}
		if r.file != nil {
			err := r.file.Commit()
			r.file = nil
			if err != nil {
				return fmt.Errorf("attack: write results: %w", err)
			}
		}
		return nil
	case r.path != "":
		return m.WriteFile(r.path)
	default:
		return json.NewEncoder(r.stdout).Encode(m)
	}
}

func (r *resultsOut) close() {
	if r.file != nil {
		r.file.Close()
	}
}

// attackWorkload is the workload attack offers before its flags adjust
// it: the named spec or scenario's (the default scenario's without
// either), with literal targets in place of its classes.
func attackWorkload(o attackOptions, literal bool) (spec workloads.Spec, err error) {
	switch {
	case o.spec != "" && o.scenario != "":
		return spec, errors.New("attack: give a scenario or --spec, not both")
	case o.spec == "-":
		// A driver that shares no directory with its generator (a pod)
		// hands it the spec on standard input.
		data, err := io.ReadAll(io.LimitReader(o.stdin, scenario.MaxFileBytes+1))
		if err != nil {
			return spec, fmt.Errorf("attack: --spec -: %w", err)
		}
		if spec, err = scenario.ParseWorkload("standard input", data); err != nil {
			return spec, err
		}
	case o.spec != "":
		if spec, err = scenario.LoadWorkload(o.spec); err != nil {
			return spec, err
		}
	default:
		name := o.scenario
		if name == "" {
			name = "default"
		}
		s, err := loadScenario(name)
		if err != nil {
			return spec, err
		}
		spec = s.Workload
	}
	if literal {
		// Literal targets replace the workload's classes; the scenario's
		// arrival stays only when a scenario or spec was named.
		spec.Classes = []workloads.Class{{Name: "targets", Weight: 1, Service: workloads.Service{Dist: workloads.Fixed}}}
		if !o.namesWorkload() {
			spec.Arrival = workloads.Arrival{Kind: workloads.Constant, RatePerSec: literalRate}
			spec.Warmup = workloads.NoWarmup // vegeta has no warm-up
		}
	}
	return spec, nil
}

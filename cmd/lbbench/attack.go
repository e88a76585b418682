package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
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
	target   string
	targets  string
	spec     string
	scenario string
	out      string
	format   string
	raw      string
	rate     rateFlag
	duration time.Duration
	warmup   time.Duration
	insecure bool
	quiet    bool
	live     bool
	inFlight int
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

// The --format values of attack.
const (
	formatLbbench    = "lbbench"
	formatVegeta     = "vegeta"
	formatVegetaJSON = "vegeta-json"
	formatVegetaCSV  = "vegeta-csv"
)

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
	f.StringVar(&o.format, "format", formatLbbench, "results format: lbbench (measurement JSON), vegeta (vegeta's gob, what \"vegeta attack\" writes), vegeta-json or vegeta-csv (vegeta's JSON lines or CSV); vegeta's -format is --targets-format")
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
	switch o.format {
	case formatLbbench, formatVegeta, formatVegetaJSON, formatVegetaCSV:
	case loadgen.TargetsHTTP, loadgen.TargetsJSON:
		return fmt.Errorf("attack: --format %s: --format is the results' format; the targets' format (vegeta's -format %s) is --targets-format %s", o.format, o.format, o.format)
	default:
		return fmt.Errorf("attack: --format %q: want %s, %s, %s or %s", o.format, formatLbbench, formatVegeta, formatVegetaJSON, formatVegetaCSV)
	}
	req, err := requestExtras(o)
	if err != nil {
		return err
	}
	entry, tgts, err := attackTargets(o, req)
	if err != nil {
		return err
	}
	if tgts == nil && req.body != nil {
		return errors.New("attack: --body is the body of literal targets; the workload's classes (--target with a base URL) have none")
	}

	spec, forever, err := attackSpec(o, changed, tgts != nil)
	if err != nil {
		return err
	}
	if forever && !changed("duration") && !o.quiet {
		fmt.Fprintln(stderr, "attack: no --duration: running until interrupted, as vegeta does (Ctrl-C writes the results)")
	}

	opts := loadgen.Options{Targets: tgts, Insecure: o.insecure, Name: o.name, MaxBody: req.maxBody}
	if tgts == nil {
		opts.Header = req.header
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
	if o.format == formatLbbench {
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
	switch o.format {
	case formatVegeta:
		r.enc = vegeta.NewEncoder(r.bw)
	case formatVegetaJSON:
		r.enc = vegeta.NewJSONEncoder(r.bw)
	default:
		r.enc = vegeta.NewCSVEncoder(r.bw)
	}
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

// attackSpec is the workload attack offers: the named spec or scenario's
// (the default scenario's without either), with literal targets in place
// of its classes, and the flags applied. forever is --duration 0.
func attackSpec(o attackOptions, changed func(string) bool, literal bool) (spec workloads.Spec, forever bool, err error) {
	switch {
	case o.spec != "" && o.scenario != "":
		return spec, false, errors.New("attack: give a scenario or --spec, not both")
	case o.spec == "-":
		// A driver that shares no directory with its generator (a pod)
		// hands it the spec on standard input.
		data, err := io.ReadAll(io.LimitReader(o.stdin, scenario.MaxFileBytes+1))
		if err != nil {
			return spec, false, fmt.Errorf("attack: --spec -: %w", err)
		}
		if spec, err = scenario.ParseWorkload("standard input", data); err != nil {
			return spec, false, err
		}
	case o.spec != "":
		s, err := scenario.LoadWorkload(o.spec)
		if err != nil {
			return spec, false, err
		}
		spec = s
	default:
		name := o.scenario
		if name == "" {
			name = "default"
		}
		s, err := loadScenario(name)
		if err != nil {
			return spec, false, err
		}
		spec = s.Workload
	}
	if literal {
		// Literal targets replace the workload's classes; the scenario's
		// arrival stays only when a scenario or spec was named.
		spec.Classes = []workloads.Class{{Name: "targets", Weight: 1, Service: workloads.Service{Dist: workloads.Fixed}}}
		if o.spec == "" && o.scenario == "" {
			spec.Arrival = workloads.Arrival{Kind: workloads.Constant, RatePerSec: literalRate}
			spec.Warmup = noneIfZero(0) // vegeta has no warm-up
		}
	}
	if changed("rate") {
		spec.Arrival.RatePerSec = o.rate.perSec
	}
	// Literal targets on their own run until interrupted, as vegeta's do.
	forever = (changed("duration") && o.duration == 0) || (literal && !changed("duration") && o.spec == "" && o.scenario == "")
	if changed("duration") {
		if o.duration < 0 {
			return spec, false, fmt.Errorf("attack: --duration must not be negative, got %s", o.duration)
		}
		spec.Duration = o.duration
	}
	if changed("warmup") {
		spec.Warmup = noneIfZero(o.warmup)
	}
	if forever {
		spec.Duration = untilInterrupted(spec)
	}
	if changed("timeout") {
		if o.timeout <= 0 {
			return spec, false, fmt.Errorf("attack: --timeout must be positive, got %s", o.timeout)
		}
		spec.Timeout = o.timeout
	}
	if changed("connections") {
		if o.connections < 1 {
			return spec, false, fmt.Errorf("attack: --connections must be at least 1, got %d", o.connections)
		}
		spec.Clients.Connections = o.connections
	}
	if changed("keepalive") {
		spec.Clients.KeepAlive = &o.keepAlive
	}
	if changed("max-in-flight") {
		if o.inFlight < 1 {
			return spec, false, fmt.Errorf("attack: --max-in-flight must be at least 1, got %d", o.inFlight)
		}
		spec.Clients.MaxInFlight = o.inFlight
	}
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return spec, false, fmt.Errorf("attack: workload: %w", err)
	}
	return spec, forever, nil
}

// untilInterrupted is the measured duration of --duration 0: the longest
// run the workload limits allow (a day, or fewer arrivals than
// workloads.MaxArrivals at a high rate), so the attack ends on Ctrl-C long
// before it ends on its own.
func untilInterrupted(spec workloads.Spec) time.Duration {
	d := workloads.MaxRunTime - spec.WarmupTime()
	if r := spec.Arrival.MeanRate(d); r > 0 {
		// Arrivals count over warm-up + duration; keep one percent of
		// margin under the bound.
		if byArrivals := time.Duration(0.99*workloads.MaxArrivals/r*float64(time.Second)) - spec.WarmupTime(); byArrivals < d {
			d = byArrivals
		}
	}
	return d
}

// attackTargets returns the entry to attack and, for literal targets,
// the targets: from --targets, standard input, or a --target URL with a
// path or query. tgts is nil when the workload's classes are sent to the
// base URL entry.
func attackTargets(o attackOptions, req extras) (entry string, tgts []vegeta.Target, err error) {
	fromStdin := o.targets == "-" || (o.targets == "" && o.target == "" && o.stdinHasData)
	switch {
	case o.target != "" && o.targets != "":
		return "", nil, errors.New("attack: give --target or --targets, not both")
	case o.target != "" && o.stdinHasData && o.spec != "-":
		return "", nil, errors.New("attack: --target given and standard input is a pipe or file: give targets one way (--target URL, or targets on standard input without --target; redirect standard input from /dev/null to keep it)")
	case o.target == "" && o.targets == "" && !o.stdinHasData:
		return "", nil, errors.New("attack: no target: give --target URL, --targets FILE, or targets on standard input (\"GET http://127.0.0.1:8080/work?ms=1\")")
	}
	if o.target != "" {
		u, err := url.Parse(o.target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", nil, fmt.Errorf("attack: --target %q is not an http:// or https:// URL", o.target)
		}
		if (u.Path == "" || u.Path == "/") && u.RawQuery == "" {
			return o.target, nil, nil // a base URL: the workload's classes
		}
		tgts = []vegeta.Target{{Method: "GET", URL: o.target, Header: req.header, Body: req.body}}
	} else {
		var src io.Reader = o.stdin
		name := "standard input"
		if !fromStdin {
			f, err := os.Open(o.targets)
			if err != nil {
				return "", nil, fmt.Errorf("attack: --targets: %w", err)
			}
			defer f.Close()
			src, name = f, o.targets
		}
		tgts, err = loadgen.ReadTargetsAs(src, o.targetsFormat, req.body, req.header)
		if err != nil {
			return "", nil, fmt.Errorf("attack: %s: %w", name, err)
		}
	}
	entry, err = loadgen.TargetsEntry(tgts)
	if err != nil {
		return "", nil, fmt.Errorf("attack: %w", err)
	}
	return entry, tgts, nil
}

// extras are what vegeta's -header, -body and -max-body add to requests
// and results.
type extras struct {
	header  http.Header
	body    []byte // nil: none
	maxBody int64
}

// requestExtras reads --header, --body and --max-body.
func requestExtras(o attackOptions) (extras, error) {
	var x extras
	for _, h := range o.headers {
		k, v, ok := strings.Cut(h, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return x, fmt.Errorf("attack: --header %q: want \"NAME: VALUE\"", h)
		}
		if x.header == nil {
			x.header = http.Header{}
		}
		x.header.Add(k, v)
	}
	if o.body != "" {
		b, err := files.Read(o.body, maxBodyFile)
		if err != nil {
			return x, fmt.Errorf("attack: --body: %w", err)
		}
		x.body = b
	}
	switch {
	case o.maxBody == -1:
		x.maxBody = loadgen.MaxBodyCap
	case o.maxBody < -1 || o.maxBody > loadgen.MaxBodyCap:
		return x, fmt.Errorf("attack: --max-body %d: want 0 to %d bytes (-1: %d)", o.maxBody, loadgen.MaxBodyCap, loadgen.MaxBodyCap)
	default:
		x.maxBody = o.maxBody
	}
	if x.maxBody > 0 && o.format == formatLbbench {
		return x, errors.New("attack: --max-body keeps bodies in vegeta's results: give --format vegeta, vegeta-json or vegeta-csv")
	}
	return x, nil
}

// maxBodyFile bounds a --body file: every request holds it.
const maxBodyFile = 16 << 20

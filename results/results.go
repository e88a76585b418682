package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/lbbench/lbbench/internal/files"
	"github.com/lbbench/lbbench/scenario"
)

// SchemaVersion is the version of the results file format. It changes only
// when a field changes meaning or is removed; adding fields keeps it.
// Files of every version from 1 are read. History (docs/results.md):
//
//   - 1: the first format.
//   - 2: wait and conn_wait (Measurement.Wait, ConnWait, Class.Wait). A
//     missing wait now means the server sent no stamps (not measured); in a
//     version 1 file it means the lbbench that wrote it did not measure
//     waits at all.
const SchemaVersion = 2

// Results is everything one scenario run produced. It is written as JSON
// after every run, so an interrupted scenario keeps the runs it finished.
type Results struct {
	// Schema is SchemaVersion at the time of writing.
	Schema int `json:"schema"`
	// Scenario is the scenario as run, with defaults filled in.
	Scenario scenario.Scenario `json:"scenario"`
	// Env describes the machine and software that produced the results.
	Env Env `json:"env"`
	// Simulated is true when the results come from lbbench's discrete-event
	// model (package model, Env.Driver "sim") rather than a measurement.
	Simulated bool `json:"simulated,omitempty"`
	// Started and Finished bound the whole scenario.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// Complete is true when every planned run finished.
	Complete bool `json:"complete"`
	// Error says why the scenario stopped early, if it did.
	Error string `json:"error,omitempty"`
	// Order is the planned run order: run IDs, round by round. A
	// scenario that stopped when decided (Stop) plans only the rounds it
	// made.
	Order []string `json:"order"`
	// Stop, when the scenario ran round after round until decided,
	// records how it ended; nil for a fixed number of rounds.
	Stop *Stop `json:"stop,omitempty"`
	// Alpha is the false-alarm rate the run's family (its comparison and
	// its statistical claims, one Holm family) was judged at: run --alpha,
	// or its share of a claims suite's (Suite). Zero in results written
	// before it was recorded, judged at the default 5%.
	Alpha float64 `json:"alpha,omitempty"`
	// Suite is the claims suite the run was made as one part of (run
	// --suite); nil for a run made on its own.
	Suite *Suite `json:"suite,omitempty"`
	// Runs are the finished runs in the order they ran.
	Runs []Run `json:"runs"`
}

// Suite is what a run made as one part of a claims suite (run --suite,
// make claims) records of it. The suite's level (5%) is split evenly
// among its scenarios that have statistical claims (Parts): each such
// scenario's run judges its family at Level/Parts (Results.Alpha) under
// its own looks, and the suite judges each claim as its run did. By the
// union bound over the scenarios (weighted Bonferroni, Holm within each),
// the suite's claims together keep its level, and what decided a run's
// stop is what the suite reports.
type Suite struct {
	// Dir is the suite's scenarios (the directory of scenario files).
	Dir string `json:"dir"`
	// Level is the suite's false-alarm rate; Parts how many of its
	// scenarios share it (those with statistical claims). A scenario
	// with none takes no share: its run is judged at the default level,
	// and nothing of it enters the suite's family.
	Level float64 `json:"level"`
	Parts int     `json:"parts"`
	// Share is true when this scenario is one of the Parts.
	Share bool `json:"share"`
	// ClaimsAlone is true when the scenario's statistical claims were
	// judged as a family of their own at its share, and alone decided
	// when a run until decided stopped; its comparison of variants was
	// judged apart, at the same level, for information. False in results
	// written before it was recorded: the claims were then ranked with
	// the comparison's tests as one family (Stop.Judging.OneFamily).
	ClaimsAlone bool `json:"claims_alone,omitempty"`
}

// Stop is how a scenario run until decided (run --until-decided) ended.
type Stop struct {
	// Rounds is the number of rounds made; MaxRounds the most it could
	// have made.
	Rounds    int `json:"rounds"`
	MaxRounds int `json:"max_rounds"`
	// Looks is how many looks the rounds were scheduled to have (run
	// --looks, compare.LookRounds); 0 for one after every round from the
	// third, and in results written before it was recorded.
	Looks int `json:"looks,omitempty"`
	// Decided is true when every judged metric was pass or fail and
	// every statistical claim judged at the looks held or failed (see
	// Judging); false when the rounds or the time budget ran out first.
	Decided bool `json:"decided"`
	// Reason says why it stopped, in a sentence: what decided it, or
	// what the rounds or the budget left undecided.
	Reason string `json:"reason"`
	// Undecided names what the last look left undecided when the rounds
	// or the budget ran out: a verdict as "METRIC of VARIANT vs
	// BASELINE", a claim as "claim CHECK". Absent when decided, when no
	// look was made, and in results written before it was recorded.
	Undecided []string `json:"undecided,omitempty"`
	// Judging is what every look judged, so that judging the results
	// again (lbbench compare) spends the same level at the same look and
	// gives the verdicts the run printed; nil in results written before
	// it was recorded.
	Judging *Judging `json:"judging,omitempty"`
}

// Judging is what a run until decided judged at each look: the
// comparison, the scenario's statistical claims, or both.
type Judging struct {
	// Metrics are the metrics judged, Tolerances their tolerances, Alpha
	// the family's level over all the looks. Absent when the looks judged
	// no comparison (a scenario of one variant, its claims only). In a
	// suite's part whose claims are a family alone (Suite.ClaimsAlone),
	// the comparison did not stop the run: it was judged apart, at the
	// last look's share, for information.
	Metrics    []string           `json:"metrics,omitempty"`
	Tolerances map[string]float64 `json:"tolerances,omitempty"`
	Alpha      float64            `json:"alpha,omitempty"`
	// Claims are the checks of the scenario's statistical claims every
	// look judged too (those more rounds can decide: ratios,
	// equivalences and bounds on a figure that varies from run to run),
	// as one family at ClaimsAlpha over all the looks; each look judged
	// them at its share of it, as claims.Judge judges the results again.
	// Absent when the looks judged no claim.
	Claims      []string `json:"claims,omitempty"`
	ClaimsAlpha float64  `json:"claims_alpha,omitempty"`
	// OneFamily is true when the comparison and the claims were judged
	// as one Holm family (each ranked among the other's p-values), so
	// that judging them again does so too; false in results written
	// before they were (two families, each at its level).
	OneFamily bool `json:"one_family,omitempty"`
}

// RunResult is one variant × workload × repetition: the unit of statistics.
type Run struct {
	// ID names the run and its log files, for example "003-least_conn-r1".
	ID string `json:"id"`
	// Variant is the variant's name; Rep its repetition, from 1.
	Variant string `json:"variant"`
	Rep     int    `json:"rep"`
	// Seed is the seed of the run's workload (scenario.Scenario.WorkloadFor:
	// the file's in round 1, one derived from it in later rounds); zero
	// in results written before it was recorded.
	Seed uint64 `json:"seed,omitempty"`
	// Started is when load began.
	Started time.Time `json:"started"`
	// Entry is the URL the load went to.
	Entry string `json:"entry"`
	// BringUp is how long the driver took to start the variant's
	// processes or containers until all were ready; TearDown how long it
	// took to stop them (workers drain) and remove them after the load.
	BringUp  time.Duration `json:"bring_up_ns"`
	TearDown time.Duration `json:"tear_down_ns"`

	// Measurement is what the generators recorded, merged.
	Measurement
	// Summary is Latency's headline figures, for readers that do not decode
	// histograms.
	Summary Summary `json:"summary"`

	// Workers has one entry per worker, in index order.
	Workers []Worker `json:"workers"`
	// Proxy holds the built-in proxy's counters, when there is one.
	Proxy *ProxyStats `json:"proxy,omitempty"`
	// Engine holds nginx's stub_status or HAProxy's "show stat" at the end
	// of the run, when the proxy is one of them.
	Engine *EngineStats `json:"engine,omitempty"`

	// Valid is false when the run was too distorted to count; Invalid
	// gives the reasons.
	Valid   bool     `json:"valid"`
	Invalid []string `json:"invalid,omitempty"`
	// CPU is the CPU time each process of the deployment used during the
	// load (warm-up included), the generator's too; empty when not
	// measured.
	CPU []ProcessCPU `json:"cpu,omitempty"`
	// Saturated, when set, says why the target could not keep up: the
	// generator's in-flight cap was reached (requests waited for a slot,
	// or were never sent) while the generator itself had CPU to spare. A
	// saturated run is valid, a measurement of a target past its
	// capacity: its latency, measured from the intended send times,
	// already charges the waiting to the target, and its percentiles are
	// lower bounds of what a larger cap would have measured.
	Saturated string `json:"saturated,omitempty"`
	// Server describes the host under the server side (workers, proxy)
	// during the run, as Generator does the generator's: nil when not
	// measured (a simulation, a build that does not report it, results
	// written before it was recorded).
	Server *Server `json:"server,omitempty"`
	// Concurrent names the other lbbench runs that were running on this
	// host at some moment of the run's load, one each: "pid 4242,
	// scenario default, since 15:04:05". Such a run is invalid unless the
	// scenario's validity.allow_concurrent says otherwise. Empty when
	// there was none, or when it was not watched (a cluster's driver, a
	// simulation, results written before it was recorded).
	Concurrent []string `json:"concurrent,omitempty"`
	// Pods, on a cluster, is where each container of the run ran and with
	// what resources; empty for the other drivers.
	Pods []Pod `json:"pods,omitempty"`
	// Failed lists the processes (or containers, or an engine's master)
	// that died during the run. A run with any is recorded, invalid, and
	// never used in comparisons.
	Failed []Failure `json:"failed,omitempty"`
}

// Failure is one process that died during a run, or that failed it
// alive: it stopped answering, or strangers shared its port.
type Failure struct {
	// Process names it: "workers", "proxy", "worker 3 (pid 1234)".
	Process string `json:"process"`
	// Exit is how it ended, for example "signal: killed" or
	// "exit status 1"; when Alive, what went wrong.
	Exit string `json:"exit"`
	// Alive says that it did not die of itself: it was killed for
	// giving no answer ("stopped answering ..."), or others took a share
	// of its connections.
	Alive bool `json:"alive,omitempty"`
	// LogTail holds the last lines of its output (for a worker, its
	// supervisor's), when there are any.
	LogTail []string `json:"log_tail,omitempty"`
}

// String is "workers: worker 3 (pid 1234) died (signal: killed)", or for
// one Alive, "proxy (pid 1234): stopped answering: ...".
func (f Failure) String() string {
	if f.Alive {
		return f.Process + ": " + f.Exit
	}
	return f.Process + " died (" + f.Exit + ")"
}

// ClassResult is one request class's share of a run.
type Class struct {
	Name     string     `json:"name"`
	Requests uint64     `json:"requests"`
	Errors   uint64     `json:"errors"`
	Latency  *Histogram `json:"latency"`
	Summary  Summary    `json:"summary"`
	// Wait is the class's share of Measurement.Wait; nil when not measured.
	Wait *Histogram `json:"wait,omitempty"`
}

// WorkerResult is one worker's share of a run.
type Worker struct {
	Index int `json:"index"`
	// Responses counts measured responses the client saw carrying this
	// worker's X-Worker header.
	Responses uint64 `json:"responses"`
	// Requests, Connections and MaxQueue are the worker's own counters for
	// the whole run, warm-up included.
	Requests    uint64 `json:"requests"`
	Connections uint64 `json:"connections"`
	MaxQueue    int64  `json:"max_queue"`
}

// Skew returns max/min of the workers' attributed responses; +Inf when some
// worker got none while others got some, and 0 with no workers.
func (r Run) Skew() float64 {
	counts := make([]uint64, len(r.Workers))
	for i, w := range r.Workers {
		counts[i] = w.Responses
	}
	return Skew(counts)
}

// Skew returns max/min of counts; +Inf when the minimum is zero and the
// maximum is not, 0 for no counts or all zero.
func Skew(counts []uint64) float64 {
	if len(counts) == 0 {
		return 0
	}
	lo, hi := counts[0], counts[0]
	for _, c := range counts[1:] {
		lo, hi = min(lo, c), max(hi, c)
	}
	if hi == 0 {
		return 0
	}
	if lo == 0 {
		return math.Inf(1)
	}
	return float64(hi) / float64(lo)
}

// WriteFile writes r as indented JSON to path atomically: readers see the
// old file or the new one, never a torn one.
//
// path must be a regular file (or nothing yet, or a link to one): a
// device or FIFO is refused (files.ErrNotRegular), since a run rewrites
// results.json after every run and a reader must never see it torn.
func (r *Results) WriteFile(path string) error {
	return writeJSON(path, "results", r, true)
}

// MaxFileBytes bounds a results or measurement file lbbench reads. A
// scenario of 100 runs with per-second intervals writes a few MiB; 256 MiB
// leaves room for far longer ones. Reading memory is bounded too: every
// histogram in it decodes to at most about 190 KB (checkEncoded bounds its
// geometry), and a file holds at most MaxHistograms of them besides its
// intervals, which are decoded one at a time when used (limits.go).
const MaxFileBytes = 256 << 20

// ReadFile reads a results file written by WriteFile and checks it: a
// known schema, a scenario, runs whose variants are in the scenario. A
// file with no runs is refused unless it records why its scenario stopped
// early (Error), as an interrupted scenario's does.
func ReadFile(path string) (*Results, error) {
	data, err := readBounded(path, "results")
	if err != nil {
		return nil, err
	}
	return Decode(path, data)
}

// Decode decodes and checks a results file's contents as ReadFile does;
// name is used in errors.
func Decode(name string, data []byte) (*Results, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("results: %s is larger than %d MiB, more than lbbench writes", name, MaxFileBytes>>20)
	}
	if err := checkShape(data); err != nil {
		if _, syntax := err.(*json.SyntaxError); syntax {
			return nil, fmt.Errorf("results: decode results %s: %w", name, err)
		}
		return nil, fmt.Errorf("results: %s: %w", name, err)
	}
	var r *Results
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("results: decode results %s: %w", name, err)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("results: %s: %w", name, err)
	}
	return r, nil
}

// check reports the first inconsistency in r, a freshly decoded file.
func (r *Results) check() error {
	if r == nil {
		return fmt.Errorf("holds null, not a results object")
	}
	if r.Schema < 1 || r.Schema > SchemaVersion {
		if r.Schema > SchemaVersion {
			return fmt.Errorf("has schema %d; this lbbench reads up to %d (upgrade lbbench)", r.Schema, SchemaVersion)
		}
		return fmt.Errorf("has schema %d; results files have schema 1 to %d (not an lbbench results file, or corrupt)", r.Schema, SchemaVersion)
	}
	if len(r.Scenario.Variants) == 0 {
		return fmt.Errorf("its scenario has no variants (not an lbbench results file, or corrupt)")
	}
	if len(r.Runs) == 0 && r.Error == "" {
		return fmt.Errorf("holds no runs and no reason why (an lbbench scenario saves results after each finished run)")
	}
	known := map[string]bool{}
	for _, v := range r.Scenario.Variants {
		known[v.Name] = true
	}
	for i, run := range r.Runs {
		if !known[run.Variant] {
			return fmt.Errorf("runs[%d] (%s) is of variant %q, which its scenario does not have", i, run.ID, run.Variant)
		}
	}
	return nil
}

// ReadMeasurement reads one generator's measurement, as "lbbench attack -o"
// writes it.
func ReadMeasurement(path string) (*Measurement, error) {
	var m Measurement
	if err := readJSON(path, "measurement", &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// WriteFile writes m as JSON to path: atomically to a regular file,
// directly to a device or FIFO ("lbbench attack -o /dev/null").
func (m *Measurement) WriteFile(path string) error {
	return writeJSON(path, "measurement", m, false)
}

// readJSON decodes the JSON file at path into v; what names it in errors.
func readJSON(path, what string, v any) error {
	data, err := readBounded(path, what)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("results: decode %s %s: %w", what, path, err)
	}
	return nil
}

// readBounded reads the regular file at path, refusing one larger than
// MaxFileBytes without reading past it, and a FIFO or device before
// reading (files.Read); what names it in errors.
func readBounded(path, what string) ([]byte, error) {
	data, err := files.Read(path, MaxFileBytes)
	if errors.Is(err, files.ErrTooLarge) {
		return nil, fmt.Errorf("results: %s %s is larger than %d MiB, more than lbbench writes", what, path, MaxFileBytes>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("results: read %s: %w", what, err)
	}
	return data, nil
}

// writeJSON encodes v and writes it to path; what names it in errors.
// Results (indent set: indented, ending in a newline) go only to a file
// replaced whole (files.WriteWhole); a measurement may go to a device.
func writeJSON(path, what string, v any, indent bool) error {
	var data []byte
	var err error
	if indent {
		data, err = json.MarshalIndent(v, "", "  ")
		data = append(data, '\n')
	} else {
		data, err = json.Marshal(v)
	}
	if err != nil {
		return fmt.Errorf("results: encode %s: %w", what, err)
	}
	write := files.Write
	if indent {
		write = files.WriteWhole
	}
	if err := write(path, data); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// RunsOf returns r's runs of the named variant, in run order, invalid and
// failed ones included (Run.Valid says which count). The slice is new;
// its runs are copies.
func (r *Results) RunsOf(variant string) []Run {
	var out []Run
	for _, run := range r.Runs {
		if run.Variant == variant {
			out = append(out, run)
		}
	}
	return out
}

// RoundsString says how many rounds r's scenario ran, for a report's
// heading: "3 runs per variant", or "4 runs per variant (until decided:
// decided after 4 rounds)" when it ran until decided.
func (r *Results) RoundsString() string {
	if r.Stop == nil {
		return fmt.Sprintf("%d runs per variant", r.Scenario.Repeat)
	}
	how := "not decided"
	if r.Stop.Decided {
		how = fmt.Sprintf("decided after %d rounds", r.Stop.Rounds)
	}
	return fmt.Sprintf("%d runs per variant (until decided, at most %d: %s)", r.Stop.Rounds, r.Stop.MaxRounds, how)
}

// CPUOf returns the CPU time the run's processes of role used ("all":
// every process, the generator's included); ok is false when the run has
// none of that role.
func (r *Run) CPUOf(role string) (cpu time.Duration, ok bool) {
	for _, c := range r.CPU {
		if role == "all" || c.Role == role {
			cpu += c.Time
			ok = true
		}
	}
	return cpu, ok
}

// CPUSkew is max/min of the workers' CPU times: 1 when even, +Inf when a
// worker used none, 0 when the run has no per-worker CPU time.
func (r *Run) CPUSkew() float64 {
	var lo, hi time.Duration
	n := 0
	for _, c := range r.CPU {
		if c.Role != RoleWorkers || c.Worker < 0 {
			continue
		}
		if n == 0 || c.Time < lo {
			lo = c.Time
		}
		hi = max(hi, c.Time)
		n++
	}
	switch {
	case n == 0:
		return 0
	case lo == 0:
		return math.Inf(1)
	}
	return float64(hi) / float64(lo)
}

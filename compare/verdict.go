package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/lbbench/lbbench/internal/files"
	"github.com/lbbench/lbbench/results"
)

// Outcome is a verdict's answer.
type Outcome string

// The three outcomes of a comparison (see measurement.md).
const (
	// Pass: the confidence interval lies inside the tolerance.
	Pass Outcome = "pass"
	// Fail: significant, and the interval lies beyond the tolerance.
	Fail Outcome = "fail"
	// Inconclusive: neither; more runs are needed.
	Inconclusive Outcome = "inconclusive"
)

// Verdict is the answer for one candidate variant and one metric compared
// with a baseline: the shape reports render. Pair and Compare (in this
// package) produce them.
type Verdict struct {
	// Variant is the candidate; Baseline what it was compared with.
	Variant  string `json:"variant"`
	Baseline string `json:"baseline,omitempty"`
	// Metric names the figure compared: "p50", "p99", "p99.9",
	// "throughput", "error_rate".
	Metric string `json:"metric"`
	// Outcome is pass, fail or inconclusive.
	Outcome Outcome `json:"outcome"`
	// Ratio is candidate/baseline of the per-run medians; CILow and CIHigh
	// bound its 95% confidence interval. Zero when unknown.
	Ratio  float64 `json:"ratio,omitempty"`
	CILow  float64 `json:"ci_low,omitempty"`
	CIHigh float64 `json:"ci_high,omitempty"`
	// Tolerance is the accepted relative change (0.1 for 10%).
	Tolerance float64 `json:"tolerance,omitempty"`
	// P is the corrected p-value of the test, when one was run: Holm's
	// adjusted p of the decision's one-sided test (paired) or of
	// Mann-Whitney's test (unpaired).
	P float64 `json:"p,omitempty"`
	// TestP is the test's own p-value before Holm's adjustment, the
	// smaller one-sided p of "worse than the tolerance" and "within it":
	// what a run's claims, judged with its comparison as one family, rank
	// the comparison's tests by (claims.Options.Others). Zero in verdicts
	// written before it was recorded.
	TestP float64 `json:"test_p,omitempty"`
	// Detail says why, in a sentence.
	Detail string `json:"detail,omitempty"`
	// Method says how the verdict was reached: MethodPaired or
	// MethodUnpaired (empty in verdicts written before there were two).
	Method string `json:"method,omitempty"`
	// Level is the confidence level of [CILow, CIHigh] (0.95): a paired
	// verdict's is that of its Holm step and sequential look, so that the
	// interval lying beyond the tolerance is the test rejecting. Zero in
	// verdicts written before it was recorded (they are 0.95).
	Level float64 `json:"level,omitempty"`
	// Rounds is the number of paired rounds a paired verdict rests on.
	Rounds int `json:"rounds,omitempty"`
	// RunTime is the measured time of the runs the verdict's pair compared,
	// both sides (nanoseconds in JSON); the pair's verdicts share it.
	// Zero in verdicts written before it was recorded.
	RunTime time.Duration `json:"run_time,omitempty"`
}

// TestPs are the verdicts' own p-values (Verdict.TestP), in order: the
// comparison's members of a family it shares with a run's claims
// (claims.Options.Others).
func TestPs(vs []Verdict) []float64 {
	ps := make([]float64, len(vs))
	for i, v := range vs {
		ps[i] = v.TestP
	}
	return ps
}

// VerdictFile is the JSON layout of a verdicts file ("verdicts.json"
// beside results.json).
type VerdictFile struct {
	Verdicts []Verdict `json:"verdicts"`
}

// VerdictsFileName is the name reports look for beside a results file.
const VerdictsFileName = "verdicts.json"

// ReadVerdicts reads a verdicts file. A missing file is not an error: it
// returns no verdicts.
func ReadVerdicts(path string) ([]Verdict, error) {
	data, err := files.Read(path, results.MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("compare: read verdicts: %w", err)
	}
	return ParseVerdicts(path, data)
}

// ParseVerdicts decodes a verdicts file's content; name labels errors.
func ParseVerdicts(name string, data []byte) ([]Verdict, error) {
	var f VerdictFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("compare: decode verdicts %s: %w", name, err)
	}
	for i, v := range f.Verdicts {
		switch v.Outcome {
		case Pass, Fail, Inconclusive:
		default:
			return nil, fmt.Errorf("compare: %s: verdicts[%d].outcome: want pass, fail or inconclusive, got %q", name, i, v.Outcome)
		}
		if v.Variant == "" || v.Metric == "" {
			return nil, fmt.Errorf("compare: %s: verdicts[%d]: variant and metric are required", name, i)
		}
	}
	return f.Verdicts, nil
}

// WriteVerdicts writes verdicts as a verdicts file (VerdictFile, JSON),
// which ReadVerdicts reads back.
func WriteVerdicts(w io.Writer, vs []Verdict) error {
	if vs == nil {
		vs = []Verdict{}
	}
	data, err := json.MarshalIndent(VerdictFile{Verdicts: vs}, "", "  ")
	if err != nil {
		return fmt.Errorf("compare: encode verdicts: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// CountOutcomes returns how many verdicts passed, failed and were
// inconclusive.
func CountOutcomes(vs []Verdict) (pass, fail, inconclusive int) {
	for _, v := range vs {
		switch v.Outcome {
		case Pass:
			pass++
		case Fail:
			fail++
		default:
			inconclusive++
		}
	}
	return pass, fail, inconclusive
}

// Overall folds verdicts into one outcome: fail when any failed, else
// inconclusive when any was, else pass. No verdicts are inconclusive.
func Overall(vs []Verdict) Outcome {
	if len(vs) == 0 {
		return Inconclusive
	}
	pass, fail, _ := CountOutcomes(vs)
	switch {
	case fail > 0:
		return Fail
	case pass == len(vs):
		return Pass
	}
	return Inconclusive
}

package reports

import (
	"testing"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
)

// newTestDoc builds r's Doc with verdicts vs as job.Report does (reports
// cannot import job, which imports reports); a DocFunc.
func newTestDoc(r *results.Results, vs []compare.Verdict) (*Doc, error) {
	sums, err := Summarize(r)
	if err != nil {
		return nil, err
	}
	return &Doc{Results: r, Summaries: sums, Verdicts: vs, Claims: claims.Judge(r), Bursts: claims.BurstComparisons(r)}, nil
}

// docOf is newTestDoc for a test: it fails t when r cannot be summarised.
func docOf(t testing.TB, r *results.Results, vs []compare.Verdict) *Doc {
	t.Helper()
	d, err := newTestDoc(r, vs)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// judged is c with its pairs' verdicts under compare's default options,
// as job.Comparison judges them.
func judged(t testing.TB, c Comparison) Comparison {
	t.Helper()
	vs, err := compare.Compare(c.Pairs, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Verdicts = vs
	return c
}

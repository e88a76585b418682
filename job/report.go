package job

import (
	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
)

// Report builds the report document of r: the variants' summaries, the
// scenario's claims judged (with the verdicts, as one Holm family: the
// verdicts' own p-values take their ranks among the claims', unless the
// claims are a family alone, SharesFamily), the bursts
// beside the model, with a comparison's verdicts (nil: none) and the sources a combined r was made
// from (nil: r alone). It is the one place a report is computed (it calls
// reports.Summarize, claims.JudgeWith and claims.BurstComparisons once each;
// internal/archtest checks that nothing else does): every format of
// package reports only formats the Doc it returns.
func Report(r *results.Results, verdicts []compare.Verdict, srcs []results.Source) (*reports.Doc, error) {
	sums, err := reports.Summarize(r)
	if err != nil {
		return nil, err
	}
	return &reports.Doc{
		Results:   r,
		Summaries: sums,
		Verdicts:  verdicts,
		Claims:    claims.JudgeWith(r, claims.Options{Others: othersOf(r, verdicts)}),
		Bursts:    claims.BurstComparisons(r),
		Sources:   srcs,
	}, nil
}

// othersOf are the p-values of verdicts' tests that take their ranks
// among r's claims: none when r's claims are a family alone
// (SharesFamily).
func othersOf(r *results.Results, verdicts []compare.Verdict) []float64 {
	if !SharesFamily(r) {
		return nil
	}
	return compare.TestPs(verdicts)
}

// PublishDoc is Report for one published run (reports.DocFunc).
func PublishDoc(r *results.Results, verdicts []compare.Verdict) (*reports.Doc, error) {
	return Report(r, verdicts, nil)
}

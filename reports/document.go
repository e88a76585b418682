package reports

import (
	"time"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
)

// Doc is one report: results and everything the formats show of them,
// computed once before any format runs (job.Report builds it, calling
// Summarize, claims.Judge and claims.BurstComparisons once each). Every
// format (WriteText, writeMarkdown, writeCSV, writeHTML, WriteDir and the
// files it writes) is a function of a Doc that only formats: none
// summarises, judges or merges. A Doc is not modified by the formats, so
// several may read one at once.
type Doc struct {
	// Results are the results reported; several results shown side by
	// side are first combined (results.Combine).
	Results *results.Results
	// Summaries are the variants' figures, Summarize(Results).
	Summaries []VariantSummary
	// Verdicts are a comparison's verdicts: the report shows a verdict
	// table, and WriteDir writes junit.xml. Nil shows none.
	Verdicts []compare.Verdict
	// Claims are the scenario's claims judged (claims.Judge(Results)).
	Claims []claims.Result
	// Bursts set each burst variant's largest load per burst beside the
	// model's (claims.BurstComparisons(Results)).
	Bursts []claims.VariantMaxLoad
	// Sources are the results files a combined report was built from, so
	// that the environment of each is shown; nil shows Results' own.
	Sources []results.Source
	// UnitRatio is the divisor from microseconds to the unit of the .hgrm
	// exports; zero means DefaultUnitRatio (milliseconds).
	UnitRatio float64
	// Generated is the time the HTML report says it was generated; the
	// zero time (the default) leaves it out, so the same results give the
	// same bytes.
	Generated time.Time
}

// DocFunc builds the Doc of results and verdicts (job.Report): what
// Publish calls for every run it publishes.
type DocFunc func(r *results.Results, verdicts []compare.Verdict) (*Doc, error)

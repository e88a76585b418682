package job

import (
	"fmt"
	"path/filepath"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
)

// JudgeSuite judges the claims of every source as one suite
// (claims.Suite): when the sources are the parts of one claims suite made
// with its shares (run --suite, make claims), each scenario's claims as
// its own run judged them, at its share of the suite's level: a family
// of their own (results.Suite.ClaimsAlone), or, in parts made before it,
// ranked among the p-values of its comparison's tests (the verdicts.json
// beside its results, when the run judged them with its claims as one
// family); else
// every scenario's statistical and model claims as one Holm family at
// claims.DefaultAlpha. Either way a correct tree fails any of the suite's
// claims by chance at most that often.
//
// A verdicts file that cannot be read is an error: without it the claims
// beside its comparison would be judged otherwise than the run judged them.
func JudgeSuite(srcs []results.Source, dir string) ([]reports.SuiteEntry, error) {
	rs := make([]*results.Results, len(srcs))
	others := make([][]float64, len(srcs))
	for i, s := range srcs {
		rs[i] = s.Results
		if SharesFamily(s.Results) {
			vs, err := compare.ReadVerdicts(filepath.Join(filepath.Dir(s.Path), compare.VerdictsFileName))
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w", s.Results.Scenario.Name, err)
			}
			others[i] = compare.TestPs(vs)
		}
	}
	judged, at, _ := claims.Suite(rs, others)
	out := make([]reports.SuiteEntry, len(srcs))
	for i, s := range srcs {
		out[i] = reports.SuiteEntry{Source: s, Claims: judged[i], Judged: at[i]}
		if rel, err := filepath.Rel(dir, filepath.Join(filepath.Dir(s.Path), reports.HTMLFile)); err == nil {
			out[i].Report = filepath.ToSlash(rel)
		}
	}
	return out, nil
}

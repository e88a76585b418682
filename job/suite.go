package job

import (
	"path/filepath"

	"github.com/lbbench/lbbench/claims"
	"github.com/lbbench/lbbench/reports"
	"github.com/lbbench/lbbench/results"
)

// JudgeSuite judges the claims of every source, the suite's statistical
// and model claims as one family (claims.Family: Holm's procedure at
// claims.DefaultAlpha over all of them), so that a correct tree fails any
// of the suite's claims by chance at most that often.
func JudgeSuite(srcs []results.Source, dir string) []reports.SuiteEntry {
	rs := make([]*results.Results, len(srcs))
	for i, s := range srcs {
		rs[i] = s.Results
	}
	judged := claims.Family(rs, claims.Options{})
	out := make([]reports.SuiteEntry, len(srcs))
	for i, s := range srcs {
		out[i] = reports.SuiteEntry{Source: s, Claims: judged[i]}
		if rel, err := filepath.Rel(dir, filepath.Join(filepath.Dir(s.Path), reports.HTMLFile)); err == nil {
			out[i].Report = filepath.ToSlash(rel)
		}
	}
	return out
}

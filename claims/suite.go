package claims

import (
	"fmt"

	"github.com/lbbench/lbbench/internal/numfmt"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// RunAlpha is the level r's family was judged at when it was made:
// results.Results.Alpha, or DefaultAlpha for results written before it
// was recorded.
func RunAlpha(r *results.Results) float64 {
	if r.Alpha > 0 {
		return r.Alpha
	}
	return DefaultAlpha
}

// Members counts the claims of s that are members of its family, judged
// at a level (ratios, equivalences, bounds on a figure that varies from
// run to run, model claims), rather than exactly or on every run: what
// gives a scenario a share of a claims suite's level (SuiteShare).
func Members(s scenario.Scenario) int {
	n := 0
	for _, c := range s.Claims {
		chk, err := scenario.ParseCheck(c.Check)
		if err == nil && leveled(chk) && !everyRun(s, chk) {
			n++
		}
	}
	return n
}

// SuiteShare is the share of a claims suite's level (DefaultAlpha) that
// scenario s, one of the suite's scenarios all (by name), is judged at
// when it is run as one part of the suite (run --suite): the level split
// evenly among the scenarios that have family members (Members), and
// alpha is its share, or 0 when s has none (its run is then judged at the
// default level, outside the suite's). Splitting by scenario rather than
// by claim keeps a scenario of one headline claim (least_conn against
// SO_REUSEPORT) from being starved by one of twenty-five (c1).
func SuiteShare(dir string, all []scenario.Scenario, s scenario.Scenario) (suite *results.Suite, alpha float64, err error) {
	parts, found := 0, false
	seen := map[string]bool{}
	for _, o := range all {
		if seen[o.Name] {
			return nil, 0, fmt.Errorf("suite %s: two scenarios named %q", dir, o.Name)
		}
		seen[o.Name] = true
		if Members(o) > 0 {
			parts++
		}
		found = found || o.Name == s.Name
	}
	if !found {
		return nil, 0, fmt.Errorf("suite %s: no scenario named %q among its %d", dir, s.Name, len(all))
	}
	share := Members(s) > 0
	suite = &results.Suite{Dir: dir, Level: DefaultAlpha, Parts: parts, Share: share, ClaimsAlone: share}
	if share {
		alpha = DefaultAlpha / float64(parts)
	}
	return suite, alpha, nil
}

// splitSuite reports whether rs are parts of one claims suite made with
// its shares (SuiteShare): every results with family members records the
// same suite, its share, and a level no larger than the suite's over its
// parts, and no scenario comes twice; the shares then sum to at most the
// suite's level. why says what is not so.
func splitSuite(rs []*results.Results) (ok bool, why string) {
	var first *results.Suite
	seen := map[string]bool{}
	parts := 0
	for _, r := range rs {
		if Members(r.Scenario) == 0 {
			continue
		}
		s := r.Suite
		switch {
		case s == nil:
			return false, fmt.Sprintf("scenario %s was not run as part of a suite (run --suite)", r.Scenario.Name)
		case !s.Share:
			return false, fmt.Sprintf("scenario %s has statistical claims but took no share of its suite", r.Scenario.Name)
		case first == nil:
			first = s
		case s.Dir != first.Dir || s.Level != first.Level || s.Parts != first.Parts:
			return false, fmt.Sprintf("scenario %s was run as part of another suite (%s, %d parts) than the others (%s, %d parts)", r.Scenario.Name, s.Dir, s.Parts, first.Dir, first.Parts)
		}
		if seen[r.Scenario.Name] {
			return false, fmt.Sprintf("scenario %s comes twice", r.Scenario.Name)
		}
		seen[r.Scenario.Name] = true
		parts++
		if r.Alpha > s.Level/float64(s.Parts)*(1+1e-9) {
			return false, fmt.Sprintf("scenario %s was judged at %s, more than its share of %s", r.Scenario.Name, levelString(r.Alpha), levelString(s.Level))
		}
	}
	if first == nil {
		return false, "no scenario has statistical claims"
	}
	if parts > first.Parts {
		return false, fmt.Sprintf("%d scenarios with statistical claims, more than the suite's %d parts", parts, first.Parts)
	}
	return true, ""
}

// Suite judges the claims of every results of rs as one suite. When rs
// are the parts of one suite made with its shares (split: run --suite,
// each scenario's family at its share of the suite's level, under its own
// looks), each results' claims are judged as its run judged them
// (JudgeWith at its level, with others[i], the p-values of its
// comparison's tests, ranked among them; nil: none), and the shares, which
// sum to the suite's level at most, keep it. Otherwise the claims of all
// of them are one Holm family at the default level (Family). out[i] holds
// rs[i]'s claims in its scenario's order; judged[i] says at what level
// they were judged (and, not split, why), "" for a scenario with no
// member of the family.
func Suite(rs []*results.Results, others [][]float64) (out [][]Result, judged []string, split bool) {
	split, why := splitSuite(rs)
	if split {
		out = make([][]Result, len(rs))
		for i, r := range rs {
			var o Options
			if i < len(others) {
				o.Others = others[i]
			}
			out[i] = JudgeWith(r, o)
		}
	} else {
		out = Family(rs, Options{})
	}
	judged = make([]string, len(rs))
	for i, r := range rs {
		switch {
		case Members(r.Scenario) == 0:
		case split:
			judged[i] = fmt.Sprintf("at %s, its share (one of %d) of the suite's %s, as its run judged them",
				numfmt.Pct4(RunAlpha(r)), r.Suite.Parts, numfmt.Pct4(r.Suite.Level))
		default:
			judged[i] = "in one Holm family over every scenario's claims at " + levelString(DefaultAlpha) + ": " + why
		}
	}
	return out, judged, split
}

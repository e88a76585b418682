package reports

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
)

// withSteal gives fakeResults' runs the host's steal: each side measured
// on 2 CPUs, with the third run (003-least_conn-r2) stolen from: 1.2 s of
// its 4 CPUs' 12 s each (10 s and 2 s of warm-up), 2.5%; the others none.
func withSteal() *results.Results {
	r := fakeResults()
	r.Scenario.Validity = scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * time.Millisecond, MaxSteal: 0.02}
	for i := range r.Runs {
		run := &r.Runs[i]
		run.Duration = r.Scenario.Workload.Duration
		run.Generator.CPUs = 2
		run.Server = &results.Server{CPUs: 2}
		if run.ID == "003-least_conn-r2" {
			run.Generator.Steal, run.Server.Steal = 200*time.Millisecond, time.Second
		}
	}
	return r
}

// TestReportsShowSteal: with some run stolen from, every report shows
// each run's steal (text and markdown by variant, HTML in the runs table
// with the threshold passed marked, CSV in a column of its own); with none
// (an idle host, a machine that is not virtual), none shows it, so their
// output is what it was (the golden files are without steal).
func TestReportsShowSteal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		r     *results.Results
		shown bool
	}{
		{"stolen", withSteal(), true},
		{"idle host", func() *results.Results {
			r := withSteal()
			for i := range r.Runs {
				r.Runs[i].Generator.Steal, r.Runs[i].Server.Steal = 0, 0
			}
			return r
		}(), false},
		{"a tick of steal", func() *results.Results {
			// 10 ms of /proc/stat on one CPU of a 12 s run: 0.02%.
			r := withSteal()
			for i := range r.Runs {
				r.Runs[i].Generator.Steal, r.Runs[i].Server.Steal = 0, 10*time.Millisecond
			}
			return r
		}(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := docOf(t, tc.r, nil)
			var text, md, page, sheet bytes.Buffer
			if err := WriteText(&text, d); err != nil {
				t.Fatal(err)
			}
			if err := writeMarkdown(&md, d); err != nil {
				t.Fatal(err)
			}
			if err := writeHTML(&page, d); err != nil {
				t.Fatal(err)
			}
			if err := writeCSV(&sheet, d); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				format, out string
				want        []string
			}{
				{"text", text.String(), []string{"host steal by run (", "a run is invalid above 2%)", "  least_conn  0.0% 2.5%", "  reuseport   0.0% 0.0%"}},
				{"markdown", md.String(), []string{"**Host steal by run (", "| least\\_conn | 0.0% 2.5% |"}},
				{"html", page.String(), []string{`<th class="n">host steal</th>`, `<td class="n over">2.5% of 4 CPUs</td>`, `<td class="n">0.0% of 4 CPUs</td>`}},
			} {
				for _, w := range c.want {
					if got := strings.Contains(c.out, w); got != tc.shown {
						t.Errorf("%s: contains %q = %v, want %v", c.format, w, got, tc.shown)
					}
				}
			}
			// The threshold is stated whenever the results record one.
			if w := "or the host stole more than 2% of the time of its CPUs (the generator&#39;s and the server&#39;s)"; !strings.Contains(page.String(), w) {
				t.Errorf("html lacks %q", w)
			}
			rows, err := csv.NewReader(&sheet).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(rows[0], csvSteal); got != tc.shown {
				t.Fatalf("csv header %q: %s column = %v, want %v", rows[0], csvSteal, got, tc.shown)
			}
			if tc.shown {
				col := slices.Index(rows[0], csvSteal)
				var cells []string
				for _, row := range rows[1:] {
					cells = append(cells, row[col])
				}
				// Two variant rows, then the runs in order.
				if want := []string{"", "", "0.000", "0.000", "2.500", "0.000"}; !slices.Equal(cells, want) {
					t.Errorf("csv %s %q, want %q", csvSteal, cells, want)
				}
			}
		})
	}
}

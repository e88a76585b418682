package selftest

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/results"
)

func TestVegetaMeasurement(t *testing.T) {
	// Rows as "vegeta encode -to=csv" writes them (body and headers
	// shortened): timestamp, code, latency ns, bytes out, bytes in, error,
	// body, attack, seq, method, url, headers.
	in := `1796600367850473147,200,3499885,0,3,,b2sK,,1,GET,http://127.0.0.1:1/work?ms=0,Q29u
1796600367853163783,200,1414580,0,3,,b2sK,,2,GET,http://127.0.0.1:1/work?ms=0,Q29u
1796600367854163783,0,30000000000,0,0,"Get ""http://127.0.0.1:1/"": dial tcp: connection refused",,,3,GET,http://127.0.0.1:1/work?ms=0,
`
	m, err := vegetaMeasurement(strings.NewReader(in), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 3 || m.Errors != 1 || m.Latency.TotalCount() != 2 || m.AchievedRate != 1.5 {
		t.Errorf("requests %d, errors %d, latencies %d, rate %v; want 3, 1, 2, 1.5", m.Requests, m.Errors, m.Latency.TotalCount(), m.AchievedRate)
	}
	if p := m.Latency.Quantile(1); p < 3490*time.Microsecond || p > 3510*time.Microsecond {
		t.Errorf("the slowest success %s, want 3.5 ms", p)
	}
	for _, bad := range []string{"", "1,200\n", "1,x,5\n", "1,200,-5\n"} {
		if _, err := vegetaMeasurement(strings.NewReader(bad), time.Second); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestVmHWM(t *testing.T) {
	kb, ok := vmHWM([]byte("Name:\tvegeta\nVmPeak:\t  900000 kB\nVmHWM:\t   12345 kB\nVmRSS:\t 1000 kB\n"))
	if !ok || kb != 12345 {
		t.Errorf("%d %v, want 12345", kb, ok)
	}
	if _, ok := vmHWM([]byte("Name:\tzombie\nState:\tZ (zombie)\n")); ok {
		t.Error("a status without VmHWM read as one")
	}
}

// genRun is a generator run of tool at rate in round with cpu of CPU time
// for n requests.
func genRun(tool string, rate, round int, cpu time.Duration, n uint64) results.Run {
	r := results.Run{ID: "x", Variant: variant(tool, rate), Rep: round, Valid: true}
	r.Requests = n
	r.Latency = results.NewHistogram()
	r.CPU = []results.ProcessCPU{{Role: results.RoleGenerator, Time: cpu}}
	return r
}

func TestReducePairsRounds(t *testing.T) {
	cfg := Config{Rates: []int{1000}, ServerRate: 1000, Rounds: 4, Tools: Tools{Vegeta: "v"}}
	res := &results.Results{Scenario: scenarioOf(cfg)}
	// lbbench's CPU per request is 1.2 times vegeta's in every round, while
	// both drift from round to round: the pairing cancels the drift.
	for round, veg := range []time.Duration{100, 150, 90, 200} {
		res.Runs = append(res.Runs,
			genRun(ToolLbbench, 1000, round+1, veg*12/10*time.Millisecond, 1000),
			genRun(ToolVegeta, 1000, round+1, veg*time.Millisecond, 1000))
	}
	f := Reduce(res)
	if len(f.Rates) != 1 {
		t.Fatalf("%d rate rows, want 1", len(f.Rates))
	}
	row := f.Rates[0]
	if math.Abs(row.Ratio-1.2) > 1e-9 || row.Low > 1.2 || row.High < 1.2 || row.High-row.Low > 1e-6 {
		t.Errorf("ratio %v [%v, %v], want 1.2 exactly (no spread once paired)", row.Ratio, row.Low, row.High)
	}
	// Medians over the rounds: vegeta's 100, 150, 90, 200 µs -> 125 µs.
	if row.Vegeta != 125*time.Microsecond || row.Lbbench != 150*time.Microsecond {
		t.Errorf("medians %s and %s, want 150µs and 125µs", row.Lbbench, row.Vegeta)
	}
	var b strings.Builder
	if err := Text(&b, f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1.20 [1.20, 1.20]") || !strings.Contains(b.String(), "150.0") {
		t.Errorf("the table does not give the ratio and the medians:\n%s", b.String())
	}
}

func TestConfigRefusesBadInput(t *testing.T) {
	for _, c := range []Config{
		{},
		{Tools: Tools{Lbbench: "x"}, Rates: []int{0}},
		{Tools: Tools{Lbbench: "x"}, Duration: time.Millisecond},
		{Tools: Tools{Lbbench: "x"}, Rounds: -1},
	} {
		if err := c.defaults(); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
}

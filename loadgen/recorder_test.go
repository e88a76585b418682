package loadgen

import (
	"net/http"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lbbench/lbbench/workloads"
)

// recorderInput returns a recorder for a constant 100k/s workload of two
// classes, counting for a named client, and n successful results of it as
// vegeta delivers them (intended time plus a little lag, a worker header).
func recorderInput(tb testing.TB, n int) (*recorder, []*vegeta.Result) {
	tb.Helper()
	spec := workloads.Spec{
		Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 100_000},
		Duration: time.Minute,
		Warmup:   -1,
		Classes:  []workloads.Class{{Name: "short", Weight: 9}, {Name: "long", Weight: 1}},
	}.WithDefaults()
	p := workloads.NewPacer(spec)
	p.SetWait(func(time.Time) {}) // schedule only; nothing is sent
	tg, err := workloads.NewTargeter(spec, "http://127.0.0.1:1")
	if err != nil {
		tb.Fatal(err)
	}
	res := make([]*vegeta.Result, n)
	for seq := range uint64(n) {
		p.Pace(0, seq)
		at, _ := p.Intended(seq)
		var r workloads.Request
		if err := tg.Target(&r); err != nil {
			tb.Fatal(err)
		}
		res[seq] = &vegeta.Result{Seq: seq, Code: 200, URL: r.URL, Timestamp: at.Add(20 * time.Microsecond),
			Latency: time.Duration(200+seq%4000) * time.Microsecond, Headers: http.Header{"X-Worker": {"3"}}}
	}
	rec := newRecorder(p, spec, nil)
	rec.forClient("c", 1)
	return rec, res
}

// TestRecorderAddAllocs checks that recording a successful result allocates
// nothing; only closing an interval (once a second) does.
func TestRecorderAddAllocs(t *testing.T) {
	rec, res := recorderInput(t, 1000)
	rec.add(res[0])
	i := 1
	if n := testing.AllocsPerRun(500, func() { rec.add(res[i]); i++ }); n != 0 {
		t.Errorf("add allocates %.1f times per result, want 0", n)
	}
}

// BenchmarkRecorderAdd is the cost of recording one successful result: the
// corrected, uncorrected and send-lag histograms, class, client, worker and
// interval.
func BenchmarkRecorderAdd(b *testing.B) {
	rec, res := recorderInput(b, workloads.ScheduleWindow)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		rec.add(res[i%len(res)])
		i++
	}
	if _, err := rec.finish(); err != nil {
		b.Fatal(err)
	}
}

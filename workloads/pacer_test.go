package workloads

import (
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func spec(kind string, rate Rate, dur time.Duration) Spec {
	s := Spec{
		Arrival:  Arrival{Kind: kind, RatePerSec: rate},
		Duration: dur,
		Warmup:   -1,
		Classes:  []Class{{Name: "a", Weight: 1}},
	}.WithDefaults()
	return s
}

// drive calls Pace as vegeta's loop would, without sleeping, and returns
// the offsets of every scheduled request.
func drive(t *testing.T, p *Pacer) []time.Duration {
	t.Helper()
	p.SetWait(func(time.Time) {})
	var offs []time.Duration
	for hits := uint64(0); ; hits++ {
		if _, stop := p.Pace(0, hits); stop {
			break
		}
		off, ok := p.Offset(hits)
		if !ok {
			t.Fatalf("request %d scheduled but has no offset", hits)
		}
		offs = append(offs, off)
	}
	return offs
}

func TestPacerConstant(t *testing.T) {
	p := NewPacer(spec(Constant, 1000, time.Second))
	offs := drive(t, p)
	if len(offs) != 1000 {
		t.Fatalf("scheduled %d requests in 1s at 1000/s, want 1000", len(offs))
	}
	for i, off := range offs {
		if want := time.Duration(i) * time.Millisecond; off != want {
			t.Fatalf("offset(%d) = %s, want %s", i, off, want)
		}
	}
}

func TestPacerPoisson(t *testing.T) {
	s := spec(Poisson, 2000, 10*time.Second)
	a, b := drive(t, NewPacer(s)), drive(t, NewPacer(s))
	if len(a) != len(b) {
		t.Fatalf("same seed gave %d and %d requests", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, offset %d differs: %s vs %s", i, a[i], b[i])
		}
	}
	// 20000 expected; a Poisson count has sd sqrt(20000) ≈ 141.
	if n := float64(len(a)); math.Abs(n-20000) > 5*141 {
		t.Errorf("scheduled %v requests, want about 20000", n)
	}
	// Exponential gaps: the coefficient of variation is 1.
	var sum, sq float64
	for i := 1; i < len(a); i++ {
		g := float64(a[i] - a[i-1])
		sum += g
		sq += g * g
	}
	n := float64(len(a) - 1)
	mean := sum / n
	cv := math.Sqrt(sq/n-mean*mean) / mean
	if math.Abs(mean-float64(500*time.Microsecond)) > 0.05*float64(500*time.Microsecond) {
		t.Errorf("mean gap %s, want about 500µs", time.Duration(mean))
	}
	if math.Abs(cv-1) > 0.05 {
		t.Errorf("gap coefficient of variation %.3f, want about 1", cv)
	}
	s.Seed = 2
	if c := drive(t, NewPacer(s)); len(c) > 10 && c[10] == a[10] {
		t.Errorf("a different seed gave the same schedule")
	}
}

func TestPacerWindow(t *testing.T) {
	p := NewPacer(spec(Constant, 1e6, time.Second))
	p.SetWait(func(time.Time) {})
	for hits := uint64(0); hits < ScheduleWindow+10; hits++ {
		p.Pace(0, hits)
	}
	if _, ok := p.Offset(5); ok {
		t.Errorf("offset of a request that left the window is still reported")
	}
	if _, ok := p.Offset(ScheduleWindow + 5); !ok {
		t.Errorf("offset of a recent request is missing")
	}
	if _, ok := p.Offset(ScheduleWindow + 100); ok {
		t.Errorf("offset of a request not yet scheduled is reported")
	}
}

// TestIntendedUnderContention checks the mapping the recorder relies on:
// when the generator cannot keep up (few workers, slow server), requests
// leave late, and Intended(Seq) is never after the actual send time, while
// the lag it charges grows as the backlog builds.
func TestIntendedUnderContention(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond) // the service time that makes the generator fall behind
	}))
	defer srv.Close()

	// 400/s for 0.5s = 200 requests; one worker at 5ms each serves at most
	// 200/s, so the schedule falls behind by about half a second.
	p := NewPacer(spec(Constant, 400, 500*time.Millisecond))
	atk := vegeta.NewAttacker(vegeta.Workers(1), vegeta.MaxWorkers(1))
	tg := func(tgt *vegeta.Target) error { tgt.Method, tgt.URL = "GET", srv.URL; return nil }
	seen := map[uint64]bool{}
	var firstLag, lastLag time.Duration
	var maxSeq uint64
	for res := range atk.Attack(tg, p, 0, "") {
		at, ok := p.Intended(res.Seq)
		if !ok {
			t.Fatalf("seq %d has no intended time", res.Seq)
		}
		if seen[res.Seq] {
			t.Fatalf("seq %d seen twice", res.Seq)
		}
		seen[res.Seq] = true
		lag := res.Timestamp.Sub(at)
		if lag < -time.Millisecond {
			t.Fatalf("seq %d sent %s before its intended time", res.Seq, -lag)
		}
		if res.Seq == 0 {
			firstLag = lag
		}
		if res.Seq >= maxSeq {
			maxSeq, lastLag = res.Seq, lag
		}
	}
	if len(seen) != 200 {
		t.Fatalf("got %d results, want 200", len(seen))
	}
	if lastLag < firstLag+200*time.Millisecond {
		t.Errorf("last request's send lag %s is not well above the first's %s: backlog not charged", lastLag, firstLag)
	}
}

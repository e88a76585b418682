package workloads

import (
	"errors"
	"math"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/field"
)

func mix() Spec {
	return Spec{
		Arrival: Arrival{RatePerSec: 100},
		Classes: []Class{
			{Name: "short", Weight: 90, Service: Service{Dist: Exp, Mean: 2 * time.Millisecond}},
			{Name: "long", Path: "/slow?x=1", Weight: 10, Service: Service{Value: 40 * time.Millisecond}},
		},
	}.WithDefaults()
}

func TestTargeterMix(t *testing.T) {
	tg, err := NewTargeter(mix(), "http://127.0.0.1:9/")
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	counts := [2]int{}
	var shortSum time.Duration
	for range n {
		var tgt Request
		if err := tg.Target(&tgt); err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(tgt.URL)
		if err != nil {
			t.Fatal(err)
		}
		c := ClassOf(tgt.URL)
		if c < 0 || c > 1 {
			t.Fatalf("URL %s carries no class", tgt.URL)
		}
		counts[c]++
		us, err := strconv.Atoi(u.Query().Get("us"))
		if err != nil {
			t.Fatalf("URL %s: us: %v", tgt.URL, err)
		}
		switch c {
		case 0:
			if u.Path != "/work" {
				t.Errorf("short path %q", u.Path)
			}
			shortSum += time.Duration(us) * time.Microsecond
		case 1:
			if u.Path != "/slow" || u.Query().Get("x") != "1" || us != 40000 {
				t.Errorf("long URL %s", tgt.URL)
			}
		}
	}
	// 10% long: binomial sd = sqrt(n*0.1*0.9) ≈ 42.
	if d := math.Abs(float64(counts[1]) - 0.1*n); d > 5*42 {
		t.Errorf("long requests: %d of %d, want about 10%%", counts[1], n)
	}
	mean := shortSum / time.Duration(counts[0])
	if mean < 1900*time.Microsecond || mean > 2100*time.Microsecond {
		t.Errorf("short mean service %s, want about 2ms", mean)
	}
}

func TestTargeterSeeded(t *testing.T) {
	urls := func() []string {
		tg, _ := NewTargeter(mix(), "http://127.0.0.1:9")
		var out []string
		for range 50 {
			var tgt Request
			tg.Target(&tgt)
			out = append(out, tgt.URL)
		}
		return out
	}
	a, b := urls(), urls()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d differs with the same seed: %s vs %s", i, a[i], b[i])
		}
	}
}

func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want int
	}{
		{"http://h/work?us=1&lbc=0", 0},
		{"http://h/work?us=1&lbc=12", 12},
		{"http://h/work?us=1", -1},
		{"http://h/work?us=1&lbc=x", -1},
		{"http://h/work?us=1&lbc=-3", -1},
	} {
		if got := ClassOf(tc.url); got != tc.want {
			t.Errorf("ClassOf(%q) = %d, want %d", tc.url, got, tc.want)
		}
	}
}

func FuzzClassOf(f *testing.F) {
	f.Add("http://h/work?us=1&lbc=3")
	f.Add("lbc=")
	f.Fuzz(func(t *testing.T, s string) {
		if c := ClassOf(s); c < -1 {
			t.Fatalf("ClassOf(%q) = %d", s, c)
		}
	})
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Spec)
		field string
	}{
		{"negative rate", func(s *Spec) { s.Arrival.RatePerSec = -5 }, "arrival.rate"},
		{"unknown arrival", func(s *Spec) { s.Arrival.Kind = "bursty" }, "arrival.kind"},
		{"no classes", func(s *Spec) { s.Classes = nil }, "classes"},
		{"zero weight", func(s *Spec) { s.Classes[1].Weight = 0 }, "classes[1].weight"},
		{"missing name", func(s *Spec) { s.Classes[0].Name = "" }, "classes[0].name"},
		{"unitless duration", func(s *Spec) { s.Duration = 20 }, "duration"},
		{"unknown dist", func(s *Spec) { s.Classes[0].Service.Dist = "normal" }, "classes[0].service.dist"},
		{"exp without mean", func(s *Spec) { s.Classes[0].Service.Mean = 0 }, "classes[0].service.mean"},
		{"preopen without keep-alive", func(s *Spec) { off := false; s.Clients.Preopen, s.Clients.KeepAlive = true, &off }, "clients.preopen"},
		{"preopen closing after N", func(s *Spec) { s.Clients.Preopen, s.Clients.RequestsPerConn = true, 5 }, "clients.preopen"},
		{"preopen with bursts", func(s *Spec) { s.Clients.Preopen, s.Bursts, s.Arrival = true, &Bursts{Size: 4, Count: 1}, Arrival{} }, "clients.preopen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mix()
			tc.edit(&s)
			err := s.Validate()
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Validate() = %v, want a FieldError on %s", err, tc.field)
			}
		})
	}
	if err := mix().Validate(); err != nil {
		t.Fatalf("valid spec: %v", err)
	}
	s := mix()
	s.Clients.Preopen = true
	if err := s.Validate(); err != nil {
		t.Fatalf("preopen with keep-alive: %v", err)
	}
}

func newTestRand() *rand.Rand { return rand.New(rand.NewPCG(7, 11)) }

func TestTargeterClassOptions(t *testing.T) {
	s := Spec{Arrival: Arrival{RatePerSec: 1}, Classes: []Class{{Name: "w", Path: "/event", Method: "POST",
		Headers: map[string]string{"X-Tenant": "a"}, BodyBytes: 100, Weight: 1, CPU: true}}}.WithDefaults()
	tg, err := NewTargeter(s, "http://127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	var tgt Request
	tg.Target(&tgt)
	if tgt.Method != "POST" || len(tgt.Body) != 100 || tgt.Header.Get("X-Tenant") != "a" {
		t.Errorf("target %+v", tgt)
	}
	if !strings.Contains(tgt.URL, "/event?") || !strings.Contains(tgt.URL, "mode=spin") || ClassOf(tgt.URL) != 0 {
		t.Errorf("URL %s", tgt.URL)
	}
}

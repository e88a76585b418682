package balancer

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// pool returns backends with the given active counts.
func pool(active ...int64) []*Backend {
	p := make([]*Backend, len(active))
	for i, a := range active {
		p[i] = &Backend{index: i}
		p[i].active.Store(a)
	}
	return p
}

func TestPolicies(t *testing.T) {
	got := strings.Join(Policies(), ",")
	if want := "least_conn,round_robin"; got != want {
		t.Fatalf("Policies() = %s, want %s", got, want)
	}
}

func TestNewPolicy(t *testing.T) {
	tests := []struct {
		name    string
		policy  string
		args    map[string]string
		wantErr string
		is      error
	}{
		{name: "round_robin", policy: "round_robin"},
		{name: "least_conn", policy: "least_conn", args: map[string]string{}},
		{
			name:    "unknown",
			policy:  "leastconn",
			wantErr: `balancer: unknown policy "leastconn" (known: ` + strings.Join(Policies(), ", ") + ")",
			is:      ErrUnknownPolicy,
		},
		{
			name:    "unexpected argument",
			policy:  "round_robin",
			args:    map[string]string{"alpha": "0.5"},
			wantErr: `balancer: policy round_robin: unknown argument "alpha" (it takes none)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPolicy(tt.policy, tt.args)
			if tt.wantErr == "" {
				if err != nil || p == nil {
					t.Fatalf("NewPolicy(%q) = %v, %v; want a policy", tt.policy, p, err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("NewPolicy(%q) error = %v, want %s", tt.policy, err, tt.wantErr)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error %v does not wrap %v", err, tt.is)
			}
		})
	}
}

func TestRegisterPanics(t *testing.T) {
	f := func(map[string]string) (Policy, error) { return new(RoundRobin), nil }
	tests := []struct {
		name   string
		policy string
		f      func(map[string]string) (Policy, error)
	}{
		{"duplicate", "round_robin", f},
		{"empty name", "", f},
		{"not snake_case", "LeastConn", f},
		{"dash", "least-conn", f},
		{"nil factory", "nil_factory", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("Register(%q) did not panic", tt.policy)
				}
			}()
			Register(tt.policy, tt.f)
		})
	}
}

func TestRoundRobinExactOverCycles(t *testing.T) {
	p := pool(5, 0, 9) // load is ignored
	var rr RoundRobin
	counts := make([]int, len(p))
	for range 3 * 7 {
		counts[rr.Pick(p, nil).Index()]++
	}
	for i, c := range counts {
		if c != 7 {
			t.Errorf("backend %d picked %d times, want 7", i, c)
		}
	}
}

func TestLeastConnPick(t *testing.T) {
	tests := []struct {
		name   string
		active []int64
		want   []int // indexes of successive picks
	}{
		{"idle pool rotates", []int64{0, 0, 0}, []int{0, 1, 2, 0, 1}},
		{"single minimum always wins", []int64{3, 1, 2}, []int{1, 1, 1, 1}},
		{"ties rotate, busy skipped", []int64{2, 1, 1}, []int{1, 1, 2, 1}},
		{"minimum found past the wrap", []int64{0, 5, 5}, []int{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pool(tt.active...)
			var lc LeastConn
			for i, want := range tt.want {
				if got := lc.Pick(p, nil).Index(); got != want {
					t.Fatalf("pick %d = backend %d, want %d", i, got, want)
				}
			}
		})
	}
}

func TestPickEmptyPool(t *testing.T) {
	for _, name := range Policies() {
		p, err := NewPolicy(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b := p.Pick(nil, nil); b != nil {
			t.Errorf("%s: Pick(empty pool) = backend %d, want nil", name, b.Index())
		}
	}
}

func TestPickDoesNotAllocate(t *testing.T) {
	backends := pool(3, 1, 4, 1, 5, 9, 2, 6)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, name := range Policies() {
		p, err := NewPolicy(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { p.Pick(backends, r) }); n != 0 {
			t.Errorf("%s: Pick allocates %.1f times per call, want 0", name, n)
		}
	}
}

// BenchmarkPick measures one decision over 8 backends under parallel use,
// with loads that make least_conn scan the whole pool.
func BenchmarkPick(b *testing.B) {
	backends := pool(3, 1, 4, 1, 5, 9, 2, 6)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, name := range Policies() {
		b.Run(name, func(b *testing.B) {
			p, err := NewPolicy(name, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if p.Pick(backends, r) == nil {
						b.Error("Pick returned nil")
						return
					}
				}
			})
		})
	}
}

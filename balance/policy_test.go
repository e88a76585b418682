package balance

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
)

// pool returns backends with the given active counts, at addresses
// 10.0.0.i:80.
func pool(active ...int64) []*Backend {
	addrs := make([]string, len(active))
	for i := range addrs {
		addrs[i] = fmt.Sprintf("10.0.0.%d:80", i)
	}
	p := NewBackends("test", addrs)
	for i, a := range active {
		p[i].active.Store(a)
	}
	return p
}

// down marks the backends at the given indexes unavailable for an hour.
func down(p []*Backend, idx ...int) []*Backend {
	for _, i := range idx {
		p[i].MarkDown(time.Hour)
	}
	return p
}

// picks returns the indexes of n successive picks (-1 for nil).
func picks(pol Policy, p []*Backend, r *http.Request, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = -1
		if b := pol.Pick(p, r); b != nil {
			out[i] = b.Index()
		}
	}
	return out
}

func mustPolicy(t testing.TB, name string, args map[string]string) Policy {
	t.Helper()
	p, err := NewPolicy(name, args)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPolicies(t *testing.T) {
	got := strings.Join(Policies(), ",")
	if want := "ewma_least_conn,hash,least_conn,p2c,peak_ewma,random,round_robin"; got != want {
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
		{name: "random seed", policy: "random", args: map[string]string{"seed": "42"}},
		{name: "p2c seed", policy: "p2c", args: map[string]string{"seed": "0"}},
		{name: "ewma alpha", policy: "ewma_least_conn", args: map[string]string{"alpha": "1"}},
		{name: "peak_ewma decay", policy: "peak_ewma", args: map[string]string{"decay": "250ms"}},
		{name: "hash header", policy: "hash", args: map[string]string{"key": "header:X-User"}},
		{name: "hash query", policy: "hash", args: map[string]string{"key": "query:user"}},
		{name: "hash path", policy: "hash", args: map[string]string{"key": "path"}},
		{
			name:    "unknown",
			policy:  "leastconn",
			wantErr: `balance: unknown policy "leastconn" (known: ` + strings.Join(Policies(), ", ") + ")",
			is:      ErrUnknownPolicy,
		},
		{
			name:    "unexpected argument",
			policy:  "round_robin",
			args:    map[string]string{"alpha": "0.5"},
			wantErr: `balance: policy round_robin: unknown argument "alpha" (it takes none)`,
		},
		{
			name:    "alpha zero",
			policy:  "ewma_least_conn",
			args:    map[string]string{"alpha": "0"},
			wantErr: `balance: policy ewma_least_conn: argument alpha: "0" is not a number in (0, 1]`,
		},
		{
			name:    "alpha not a number",
			policy:  "ewma_least_conn",
			args:    map[string]string{"alpha": "NaN"},
			wantErr: `argument alpha: "NaN" is not a number in (0, 1]`,
		},
		{
			name:    "unknown argument of a policy with arguments",
			policy:  "ewma_least_conn",
			args:    map[string]string{"beta": "1"},
			wantErr: `balance: policy ewma_least_conn: unknown argument "beta" (known: alpha)`,
		},
		{
			name:    "negative decay",
			policy:  "peak_ewma",
			args:    map[string]string{"decay": "-1s"},
			wantErr: `argument decay: "-1s" is not a positive duration`,
		},
		{
			name:    "decay without unit",
			policy:  "peak_ewma",
			args:    map[string]string{"decay": "10"},
			wantErr: `argument decay: "10" is not a positive duration`,
		},
		{
			name:    "bad seed",
			policy:  "p2c",
			args:    map[string]string{"seed": "-1"},
			wantErr: `balance: policy p2c: argument seed: "-1" is not an unsigned integer`,
		},
		{
			name:    "bad hash key",
			policy:  "hash",
			args:    map[string]string{"key": "cookie:id"},
			wantErr: `balance: policy hash: argument key: "cookie:id" is not path, header:NAME or query:NAME`,
		},
		{
			name:    "hash header without name",
			policy:  "hash",
			args:    map[string]string{"key": "header:"},
			wantErr: `argument key: "header:" is not`,
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
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
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

// TestPickSequences checks the deterministic policies pick by pick.
func TestPickSequences(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		args   map[string]string
		active []int64
		down   []int
		want   []int // indexes of successive picks; -1 for nil
	}{
		{"round_robin cycles", "round_robin", nil, []int64{5, 0, 9}, nil, []int{0, 1, 2, 0, 1, 2}},
		{"round_robin gives a down backend's turn to the next", "round_robin", nil, []int64{0, 0, 0}, []int{1}, []int{0, 2, 2, 0, 2, 2}},
		{"round_robin wraps past a down last backend", "round_robin", nil, []int64{0, 0, 0}, []int{2}, []int{0, 1, 0, 0, 1, 0}},
		{"round_robin all down", "round_robin", nil, []int64{0, 0}, []int{0, 1}, []int{-1, -1}},

		{"least_conn idle pool rotates", "least_conn", nil, []int64{0, 0, 0}, nil, []int{0, 1, 2, 0, 1}},
		{"least_conn single minimum always wins", "least_conn", nil, []int64{3, 1, 2}, nil, []int{1, 1, 1, 1}},
		{"least_conn ties rotate, busy skipped", "least_conn", nil, []int64{2, 1, 1}, nil, []int{1, 1, 2, 1}},
		{"least_conn minimum found past the wrap", "least_conn", nil, []int64{0, 5, 5}, nil, []int{0, 0, 0}},
		{"least_conn skips a down idle backend", "least_conn", nil, []int64{0, 3, 2}, []int{0}, []int{2, 2, 2}},
		{"least_conn all down", "least_conn", nil, []int64{0}, []int{0}, []int{-1}},

		// alpha 1: the score is the active count, so it is least_conn.
		{"ewma alpha 1 is least_conn", "ewma_least_conn", map[string]string{"alpha": "1"}, []int64{2, 1, 1}, nil, []int{1, 1, 2, 1}},
		{"ewma idle pool rotates", "ewma_least_conn", nil, []int64{0, 0, 0}, nil, []int{0, 1, 2, 0}},
		{"ewma skips a down backend", "ewma_least_conn", nil, []int64{0, 0, 0}, []int{1}, []int{0, 2, 2, 0}},
		{"ewma all down", "ewma_least_conn", nil, []int64{0, 0}, []int{0, 1}, []int{-1}},

		// No latency observed: idle backends cost nothing and rotate; busy
		// ones are avoided.
		{"peak_ewma unmeasured idle pool rotates", "peak_ewma", nil, []int64{0, 0, 0}, nil, []int{0, 1, 2, 0}},
		{"peak_ewma unmeasured busy avoided", "peak_ewma", nil, []int64{1, 0, 2}, nil, []int{1, 1, 1}},
		{"peak_ewma unmeasured all busy: fewest pending", "peak_ewma", nil, []int64{3, 1, 2}, nil, []int{1, 1}},
		{"peak_ewma skips a down backend", "peak_ewma", nil, []int64{0, 0}, []int{0}, []int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := down(pool(tt.active...), tt.down...)
			got := picks(mustPolicy(t, tt.policy, tt.args), p, nil, len(tt.want))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("picks = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRoundRobinExactConcurrent: 3000 picks over 3 backends from 60
// goroutines give exactly 1000 each.
func TestRoundRobinExactConcurrent(t *testing.T) {
	p := pool(0, 0, 0)
	var rr RoundRobin
	var counts [3]atomic.Int64
	var wg sync.WaitGroup
	for range 60 {
		wg.Go(func() {
			for range 50 {
				counts[rr.Pick(p, nil).Index()].Add(1)
			}
		})
	}
	wg.Wait()
	for i := range counts {
		if c := counts[i].Load(); c != 1000 {
			t.Errorf("backend %d picked %d times, want 1000", i, c)
		}
	}
}

// TestSeededRandomness: the same seed gives the same sequence, another
// seed another one.
func TestSeededRandomness(t *testing.T) {
	for _, name := range []string{"random", "p2c"} {
		t.Run(name, func(t *testing.T) {
			seq := func(seed string) []int {
				return picks(mustPolicy(t, name, map[string]string{"seed": seed}), pool(0, 0, 0, 0, 0, 0, 0, 0), nil, 64)
			}
			a, b, c := seq("7"), seq("7"), seq("8")
			if !slices.Equal(a, b) {
				t.Errorf("seed 7 twice: %v and %v", a, b)
			}
			if slices.Equal(a, c) {
				t.Errorf("seeds 7 and 8 give the same sequence %v", a)
			}
			def1 := picks(mustPolicy(t, name, nil), pool(0, 0, 0, 0, 0, 0, 0, 0), nil, 64)
			def2 := picks(mustPolicy(t, name, map[string]string{"seed": strconv.Itoa(DefaultSeed)}), pool(0, 0, 0, 0, 0, 0, 0, 0), nil, 64)
			if !slices.Equal(def1, def2) {
				t.Errorf("no seed is not DefaultSeed: %v and %v", def1, def2)
			}
		})
	}
}

// spread counts n picks per backend.
func spread(pol Policy, p []*Backend, r *http.Request, n int) []int {
	counts := make([]int, len(p))
	for range n {
		if b := pol.Pick(p, r); b != nil {
			counts[b.Index()]++
		}
	}
	return counts
}

// within reports whether x is within frac of want.
func within(x int, want, frac float64) bool {
	return float64(x) >= want*(1-frac) && float64(x) <= want*(1+frac)
}

func TestRandomUniformOverAvailable(t *testing.T) {
	const n = 8000
	counts := spread(mustPolicy(t, "random", nil), down(pool(0, 0, 0, 0, 0), 2), nil, n)
	if counts[2] != 0 {
		t.Errorf("down backend 2 picked %d times", counts[2])
	}
	for i, c := range counts {
		if i != 2 && !within(c, n/4, 0.15) {
			t.Errorf("backend %d picked %d of %d times, want about %d (all %v)", i, c, n, n/4, counts)
		}
	}
}

func TestP2C(t *testing.T) {
	const n = 8000
	t.Run("the less loaded of the two", func(t *testing.T) {
		// Backend 3 is idle and the rest busy: it wins every pair it is
		// drawn into, 2 pairs in 4 (2/n for n = 4).
		counts := spread(mustPolicy(t, "p2c", nil), pool(9, 9, 9, 0), nil, n)
		if !within(counts[3], n/2, 0.1) {
			t.Errorf("idle backend picked %d of %d times, want about %d (all %v)", counts[3], n, n/2, counts)
		}
	})
	t.Run("two backends: never the busier", func(t *testing.T) {
		if counts := spread(mustPolicy(t, "p2c", nil), pool(1, 0), nil, 100); counts[0] != 0 {
			t.Errorf("busier backend picked %d times", counts[0])
		}
	})
	t.Run("ties: first drawn, so uniform", func(t *testing.T) {
		counts := spread(mustPolicy(t, "p2c", nil), pool(2, 2, 2, 2), nil, n)
		for i, c := range counts {
			if !within(c, n/4, 0.15) {
				t.Errorf("backend %d picked %d of %d times under a tie (all %v)", i, c, n, counts)
			}
		}
	})
	t.Run("down backends skipped", func(t *testing.T) {
		// Backend 0 is idle but down; 1 and 2 are down too, so pairs often
		// have no available member and fall back to a random draw.
		counts := spread(mustPolicy(t, "p2c", nil), down(pool(0, 5, 5, 5, 5), 0, 1, 2), nil, n)
		if counts[0]+counts[1]+counts[2] != 0 || counts[3]+counts[4] != n {
			t.Errorf("picks %v, want only backends 3 and 4", counts)
		}
	})
	t.Run("single backend", func(t *testing.T) {
		if got := picks(mustPolicy(t, "p2c", nil), down(pool(0), 0), nil, 2); !slices.Equal(got, []int{-1, -1}) {
			t.Errorf("picks %v on a down single backend", got)
		}
	})
}

// TestEWMAResistsSpikes: a backend that was busy keeps a high score for a
// few picks after it becomes idle, where least_conn would jump at once.
func TestEWMAResistsSpikes(t *testing.T) {
	p := pool(4, 0)
	e := mustPolicy(t, "ewma_least_conn", map[string]string{"alpha": "0.5"})
	for range 10 {
		if got := e.Pick(p, nil).Index(); got != 1 {
			t.Fatalf("picked busy backend %d", got)
		}
	}
	// Now 0 is idle and 1 has one request: 0's score (about 4) decays by
	// half per pick, 1's rises toward 1.
	p[0].active.Store(0)
	p[1].active.Store(1)
	got := picks(e, p, nil, 4)
	if want := []int{1, 1, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("picks after the spike = %v, want %v (least_conn would give 0 at once)", got, want)
	}
	if got := picks(mustPolicy(t, "least_conn", nil), p, nil, 2); !slices.Equal(got, []int{0, 0}) {
		t.Errorf("least_conn picks %v", got)
	}
}

// fakeClock is a settable nanotime.
type fakeClock struct{ t int64 }

func (c *fakeClock) now() int64              { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t += int64(d) }

// cheaperThan reports whether pe's cost for b, now, is below d, as its
// Pick sees it: whether pe picks b over a fresh idle backend whose only
// observation, made now, was d. b must be available and idle.
func cheaperThan(pe *PeakEWMA, b *Backend, d time.Duration) bool {
	ref := NewBackends("ref", []string{"ref:80"})[0]
	pe.Observe(ref, d)
	return pe.Pick([]*Backend{b, ref}, nil) == b
}

func TestPeakEWMA(t *testing.T) {
	clock := &fakeClock{t: 1}
	pe := NewPeakEWMA(time.Second)
	pe.now = clock.now
	p := pool(0, 0, 0)
	pe.Observe(p[0], 100*time.Millisecond)
	pe.Observe(p[1], 10*time.Millisecond)
	pe.Observe(p[2], 10*time.Millisecond)

	// The tie between 1 and 2 goes to the first met by a scan that
	// starts one further each pick (0, 1, 2, 0), as in least_conn.
	if got := picks(pe, p, nil, 4); !slices.Equal(got, []int{1, 1, 2, 1}) {
		t.Errorf("picks = %v, want the two fast backends, ties in turn", got)
	}
	// A peak is taken at once: backend 1 now costs 200ms.
	pe.Observe(p[1], 200*time.Millisecond)
	if got := picks(pe, p, nil, 2); !slices.Equal(got, []int{2, 2}) {
		t.Errorf("after a peak on 1: picks = %v, want 2, 2", got)
	}
	// Pending requests multiply the cost: 10ms*(10+1) > 100ms*(0+1).
	p[2].active.Store(10)
	if got := picks(pe, p, nil, 2); !slices.Equal(got, []int{0, 0}) {
		t.Errorf("with 10 pending on 2: picks = %v, want 0, 0", got)
	}
	p[2].active.Store(0)
	// A lower observation right after the peak barely moves it (no time
	// passed); after several decay times it dominates.
	pe.Observe(p[1], time.Millisecond)
	if cheaperThan(pe, p[1], 190*time.Millisecond) {
		t.Error("cost right after the peak is below 190ms, want about 200ms")
	}
	clock.advance(5 * time.Second)
	pe.Observe(p[1], time.Millisecond)
	if !cheaperThan(pe, p[1], 3*time.Millisecond) {
		t.Error("cost 5 decays later is above 3ms, want about 1ms")
	}
	// Without observations every cost decays toward zero.
	clock.advance(time.Minute)
	for i, b := range p {
		if !cheaperThan(pe, b, time.Microsecond) {
			t.Errorf("backend %d costs more than 1µs after a minute of silence", i)
		}
	}
}

// TestPeakEWMARanking: the log-domain pick chooses a backend of least
// cost*(active+1) at the time of the pick, over random states.
func TestPeakEWMARanking(t *testing.T) {
	const decay = 500 * time.Millisecond
	clock := &fakeClock{t: int64(time.Hour)}
	pe := NewPeakEWMA(decay)
	pe.now = clock.now
	rnd := NewRandom(9)
	// Each backend is observed at most once a round, so its cost at the
	// pick is that response time decayed since: rtt*e^(-(now-at)/decay).
	type observation struct{ rtt, at int64 }
	var seen []observation
	load := func(b *Backend) float64 {
		o, a := seen[b.Index()], float64(b.Active())
		switch {
		case o.rtt == 0 && a == 0:
			return 0
		case o.rtt == 0:
			return 1e15 + a // no cost and busy: last, by pending
		}
		return float64(o.rtt) * math.Exp(-float64(clock.t-o.at)/float64(decay)) * (a + 1)
	}
	for round := range 300 {
		p := pool(make([]int64, 6)...)
		seen = make([]observation, len(p))
		for i, b := range p {
			r := rnd.rnd.next()
			b.active.Store(int64(r % 5))
			if r>>8%5 != 0 { // most have a cost, observed at various times
				clock.advance(time.Duration(r >> 16 % uint64(2*time.Second)))
				rtt := time.Duration(r >> 24 % uint64(50*time.Millisecond))
				pe.Observe(b, rtt)
				seen[i] = observation{int64(rtt), clock.t}
			}
			if r>>40%7 == 0 {
				b.MarkDown(time.Hour)
			}
		}
		clock.advance(time.Duration(rnd.rnd.next() % uint64(3*time.Second)))
		got := pe.Pick(p, nil)
		var want *Backend
		for _, b := range p {
			if b.Available() && (want == nil || load(b) < load(want)) {
				want = b
			}
		}
		if (got == nil) != (want == nil) {
			t.Fatalf("round %d: picked %v, want %v", round, got, want)
		}
		if got != nil && math.Abs(load(got)-load(want)) > 1e-9*load(want) {
			t.Fatalf("round %d: picked backend %d with load %g, backend %d has %g", round, got.Index(), load(got), want.Index(), load(want))
		}
	}
}

func TestHashKeys(t *testing.T) {
	req := func(target string, hdr ...string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		return r
	}
	tests := []struct {
		key    string
		r      *http.Request
		want   string
		wantOK bool
	}{
		{"path", req("/a/b?x=1"), "/a/b", true},
		{"", req("/a"), "/a", true},
		{"header:x-user", req("/", "X-User", "alice"), "alice", true},
		{"header:X-User", req("/"), "", false},
		{"query:user", req("/?a=1&user=bob&user=carol"), "bob", true},
		{"query:user", req("/?username=x&user=%20z"), "%20z", true},
		{"query:user", req("/?user="), "", false},
		{"query:user", req("/?a=1"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.key+" "+tt.r.URL.String(), func(t *testing.T) {
			h, err := NewHash(tt.key)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := h.key(tt.r)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("key = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestHashPlacement(t *testing.T) {
	h := mustPolicy(t, "hash", map[string]string{"key": "query:user"})
	p := pool(0, 0, 0, 0)
	owner := map[string]int{}
	counts := make([]int, len(p))
	for i := range 400 {
		user := "u" + strconv.Itoa(i)
		r := httptest.NewRequest(http.MethodGet, "/?user="+user, nil)
		b := h.Pick(p, r).Index()
		owner[user] = b
		counts[b]++
		if again := h.Pick(p, r).Index(); again != b {
			t.Fatalf("%s placed on %d then %d", user, b, again)
		}
	}
	for i, c := range counts {
		if !within(c, 100, 0.35) {
			t.Errorf("backend %d owns %d of 400 keys (all %v)", i, c, counts)
		}
	}
	t.Run("list order does not matter", func(t *testing.T) {
		rev := slices.Clone(p)
		slices.Reverse(rev)
		for user, b := range owner {
			r := httptest.NewRequest(http.MethodGet, "/?user="+user, nil)
			if got := h.Pick(rev, r); got != p[b] {
				t.Fatalf("%s: reversed list gives %s, want %s", user, got.Addr, p[b].Addr)
			}
		}
	})
	t.Run("a down backend's keys alone move", func(t *testing.T) {
		down(p, 1)
		defer p[1].downUntil.Store(0)
		for user, b := range owner {
			r := httptest.NewRequest(http.MethodGet, "/?user="+user, nil)
			got := h.Pick(p, r).Index()
			if b != 1 && got != b || got == 1 {
				t.Fatalf("%s moved from %d to %d with backend 1 down", user, b, got)
			}
		}
	})
	t.Run("requests without the key go round robin", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if got := picks(h, p, r, 5); !slices.Equal(got, []int{0, 1, 2, 3, 0}) {
			t.Errorf("picks %v", got)
		}
	})
}

func TestKeysMoved(t *testing.T) {
	const keys = 10000
	four := []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80"}
	five := append(slices.Clone(four), "10.0.0.5:80")
	tests := []struct {
		name          string
		before, after []string
		want          float64 // expected fraction moved
	}{
		{"remove one of four", four, four[:3], 1.0 / 4},
		{"add a fifth", four, five, 1.0 / 5},
		{"remove from the middle", five, slices.Delete(slices.Clone(five), 2, 3), 1.0 / 5},
		{"same set reordered", four, []string{four[3], four[1], four[0], four[2]}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := KeysMoved(tt.before, tt.after, keys)
			if tt.want == 0 && got != 0 || !within(got, tt.want*keys, 0.1) && tt.want != 0 {
				t.Errorf("KeysMoved = %d of %d, want about %.0f", got, keys, tt.want*keys)
			}
		})
	}
	// Exactness: the keys that move when a backend leaves are exactly the
	// ones it owned.
	b := NewBackends("", four)
	owned := 0
	for i := range keys {
		if rendezvous(b, hashString("k"+strconv.Itoa(i))).Addr == four[3] {
			owned++
		}
	}
	if got := KeysMoved(four, four[:3], keys); got != owned {
		t.Errorf("removing %s moved %d keys, it owned %d", four[3], got, owned)
	}
}

// allPolicies builds every registered policy with default arguments.
func allPolicies(t testing.TB) map[string]Policy {
	m := map[string]Policy{}
	for _, name := range Policies() {
		m[name] = mustPolicy(t, name, nil)
	}
	return m
}

func TestEveryPolicySkipsUnavailable(t *testing.T) {
	for name, pol := range allPolicies(t) {
		t.Run(name, func(t *testing.T) {
			// Backend 0 is idle, so load-aware policies would prefer it.
			p := down(pool(0, 2, 2, 2, 2), 0)
			for i := range 500 {
				r := httptest.NewRequest(http.MethodGet, "/k"+strconv.Itoa(i), nil)
				b := pol.Pick(p, r)
				if b == nil || b.Index() == 0 {
					t.Fatalf("pick %d = %v, want an available backend", i, b)
				}
			}
			down(p, 1, 2, 3, 4)
			if b := pol.Pick(p, httptest.NewRequest(http.MethodGet, "/", nil)); b != nil {
				t.Fatalf("all down: picked %s", b.Addr)
			}
		})
	}
}

func TestAvailableExpires(t *testing.T) {
	b := pool(0)[0]
	b.MarkDown(time.Millisecond)
	if b.Available() {
		t.Fatal("available right after MarkDown")
	}
	testkit.WaitFor(t, "the mark to expire", b.Available)
	if b.downUntil.Load() != 0 || b.DownMarks() != 1 {
		t.Errorf("after expiry: downUntil %d, marks %d", b.downUntil.Load(), b.DownMarks())
	}
}

func TestPickEmptyPool(t *testing.T) {
	for name, p := range allPolicies(t) {
		if b := p.Pick(nil, nil); b != nil {
			t.Errorf("%s: Pick(empty pool) = backend %d, want nil", name, b.Index())
		}
	}
}

func TestPickDoesNotAllocate(t *testing.T) {
	backends := pool(3, 1, 4, 1, 5, 9, 2, 6)
	down(backends, 1)
	r := httptest.NewRequest(http.MethodGet, "/a?user=x", nil)
	r.Header.Set("X-User", "y")
	for name, p := range allPolicies(t) {
		if n := testing.AllocsPerRun(100, func() { p.Pick(backends, r) }); n != 0 {
			t.Errorf("%s: Pick allocates %.1f times per call, want 0", name, n)
		}
		if n := testing.AllocsPerRun(100, func() { PickAcquire(p, backends, r).Release() }); n != 0 {
			t.Errorf("%s: PickAcquire allocates %.1f times per call, want 0", name, n)
		}
	}
	for _, key := range []string{"header:X-User", "query:user"} {
		p := mustPolicy(t, "hash", map[string]string{"key": key})
		if n := testing.AllocsPerRun(100, func() { p.Pick(backends, r) }); n != 0 {
			t.Errorf("hash %s: Pick allocates %.1f times per call, want 0", key, n)
		}
	}
	pe := mustPolicy(t, "peak_ewma", nil).(Observer)
	if n := testing.AllocsPerRun(100, func() { pe.Observe(backends[0], time.Millisecond) }); n != 0 {
		t.Errorf("peak_ewma: Observe allocates %.1f times per call, want 0", n)
	}
}

// BenchmarkPick measures one decision over 8 and 64 backends under
// parallel use, with mixed loads so that the load-aware policies scan the
// whole pool, and request paths that vary for hash.
func BenchmarkPick(b *testing.B) {
	for _, n := range []int{8, 64} {
		active := make([]int64, n)
		for i := range active {
			active[i] = int64(1 + (i*7)%5)
		}
		reqs := make([]*http.Request, 64)
		for i := range reqs {
			reqs[i] = httptest.NewRequest(http.MethodGet, "/item/"+strconv.Itoa(i), nil)
		}
		for _, name := range Policies() {
			b.Run(fmt.Sprintf("%s/backends=%d", name, n), func(b *testing.B) {
				backends := pool(active...)
				p := mustPolicy(b, name, nil)
				if o, ok := p.(Observer); ok {
					// Measured costs, so that every pick decays them.
					for i, be := range backends {
						o.Observe(be, time.Duration(i+1)*time.Millisecond)
					}
				}
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						if p.Pick(backends, reqs[i&63]) == nil {
							b.Error("Pick returned nil")
							return
						}
						i++
					}
				})
			})
		}
	}
}

// FuzzHashKey: never panics, and a key parsed from any request is never
// missing for the path source.
func FuzzHashKey(f *testing.F) {
	for _, s := range []string{"path", "header:X-User", "query:u", "query:", "header:a b"} {
		f.Add(s, "/p?u=1&v=2")
	}
	f.Fuzz(func(t *testing.T, key, target string) {
		h, err := NewHash(key)
		if err != nil {
			return
		}
		r, err := http.NewRequest(http.MethodGet, "http://x"+target, nil)
		if err != nil || !strings.HasPrefix(target, "/") {
			return
		}
		k, ok := h.key(r)
		if h.kind == 'p' && (!ok || k != r.URL.Path) {
			t.Fatalf("path key %q, %v for %q", k, ok, target)
		}
		if b := h.Pick(pool(0, 0, 0), r); b == nil {
			t.Fatal("no pick on an available pool")
		}
	})
}

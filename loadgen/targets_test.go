package loadgen

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lbbench/lbbench/workloads"
)

// TestReadTargetsVegetaHTTPFormat reads targets as vegeta's http format
// writes them: comments, headers, an @body file, blank lines between.
func TestReadTargetsVegetaHTTPFormat(t *testing.T) {
	body := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(body, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "# two targets\nGET http://127.0.0.1:8080/work?ms=1\nX-A: 1\n\nPOST http://127.0.0.1:8080/p\nContent-Type: application/json\n@" + body + "\n"
	tgts, err := ReadTargets(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(tgts) != 2 {
		t.Fatalf("%d targets, want 2: %+v", len(tgts), tgts)
	}
	if g := tgts[0]; g.Method != "GET" || g.URL != "http://127.0.0.1:8080/work?ms=1" || g.Header.Get("X-A") != "1" || len(g.Body) != 0 {
		t.Errorf("first target %+v", g)
	}
	if p := tgts[1]; p.Method != "POST" || p.Header.Get("Content-Type") != "application/json" || string(p.Body) != `{"a":1}` {
		t.Errorf("second target %+v", p)
	}
	entry, err := TargetsEntry(tgts)
	if err != nil || entry != "http://127.0.0.1:8080" {
		t.Errorf("entry %q, %v", entry, err)
	}

	for name, bad := range map[string]string{
		"empty":      "# nothing\n",
		"bad method": "get http://127.0.0.1/\n",
		"bad url":    "GET 127.0.0.1 x\n",
		"no url":     "GET\n",
	} {
		t.Run(name, func(t *testing.T) {
			if tgts, err := ReadTargets(strings.NewReader(bad)); err == nil {
				t.Errorf("read %+v, want an error", tgts)
			}
		})
	}
	if _, err := TargetsEntry([]vegeta.Target{{URL: "http://127.0.0.1:1/"}, {URL: "http://127.0.0.1:2/"}}); err == nil {
		t.Error("targets on two entries accepted")
	}
	if e, err := TargetsEntry([]vegeta.Target{{URL: "https://localhost/x"}}); err != nil || e != "https://localhost:443" {
		t.Errorf("default https port: %q, %v", e, err)
	}
}

// TestAttackLiteralTargetsTLS attacks a TLS server on 127.0.0.1 with two
// literal targets: their paths, queries, headers and bodies must arrive
// exactly as given, round robin, and every measured request must come back
// as a vegeta result stamped with its intended time. Without Insecure the
// test server's certificate is refused.
func TestAttackLiteralTargetsTLS(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [16]byte
		n, _ := r.Body.Read(b[:])
		mu.Lock()
		seen[r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("X-A")+" "+string(b[:n])]++
		mu.Unlock()
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes below
	srv.StartTLS()
	defer srv.Close()
	tgts := []vegeta.Target{
		{Method: "GET", URL: srv.URL + "/work?ms=1", Header: http.Header{"X-A": {"1"}}},
		{Method: "POST", URL: srv.URL + "/p/q?x=y&z", Body: []byte("hi")},
	}
	entry, err := TargetsEntry(tgts)
	if err != nil {
		t.Fatal(err)
	}
	spec := workloads.Spec{
		Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 200},
		Duration: 500 * time.Millisecond,
		Warmup:   -1,
		Classes:  []workloads.Class{{Name: "targets", Weight: 1}},
	}.WithDefaults()
	var got []*vegeta.Result
	m, err := Attack(context.Background(), entry, spec, Options{Targets: tgts, Insecure: true,
		Results: func(r *vegeta.Result) { got = append(got, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 100 || m.Errors != 0 {
		t.Fatalf("%d requests, %d errors %v; want 100, 0", m.Requests, m.Errors, m.ErrorKinds)
	}
	want := map[string]int{"GET /work?ms=1 1 ": 50, "POST /p/q?x=y&z  hi": 50}
	for k, n := range want {
		if seen[k] != n {
			t.Errorf("server saw %q %d times, want %d (all: %v)", k, seen[k], n, seen)
		}
	}
	if m.Classes[0].Requests != 100 {
		t.Errorf("class targets has %d requests, want 100", m.Classes[0].Requests)
	}
	if len(got) != 100 {
		t.Fatalf("%d vegeta results, want 100", len(got))
	}
	// Intended times of a constant 200/s are 5 ms apart exactly.
	first := got[0].Timestamp
	for _, r := range got {
		if r.Code != 200 || r.Error != "" {
			t.Fatalf("result %+v", r)
		}
		if _, ok := r.Headers[sentHeader]; ok {
			t.Fatalf("internal header %s left in a result", sentHeader)
		}
		if off := r.Timestamp.Sub(first); off%(5*time.Millisecond) != 0 {
			t.Errorf("result seq %d at +%s, not on the 5 ms schedule", r.Seq, off)
		}
	}

	m, err = Attack(context.Background(), entry, spec, Options{Targets: tgts})
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests == 0 || m.Errors != m.Requests {
		t.Errorf("without Insecure: %d of %d requests failed, want all (unverified certificate)", m.Errors, m.Requests)
	}
}

// FuzzReadTargets: any input is refused or gives targets whose entry is
// either refused or an http(s)://host:port both a URL and its own entry.
func FuzzReadTargets(f *testing.F) {
	for _, s := range []string{
		"GET http://127.0.0.1:8080/work?ms=1\n",
		"POST https://h/p\nX-A: 1\n\nGET https://h:443/q\n",
		"# c\n\nGET http://[::1]:1/\n",
		"GET\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Contains(s, "@") {
			return // body files: the fuzzer must not read the file system
		}
		tgts, err := ReadTargets(strings.NewReader(s))
		if err != nil {
			return
		}
		if len(tgts) == 0 {
			t.Fatal("no targets and no error")
		}
		entry, err := TargetsEntry(tgts)
		if err != nil {
			return
		}
		again, err := TargetsEntry([]vegeta.Target{{URL: entry}})
		if err != nil || again != entry {
			t.Errorf("entry %q of %q is not its own entry: %q, %v", entry, s, again, err)
		}
	})
}

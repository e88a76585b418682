package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lbbench/lbbench/internal/neighbours"
	"github.com/lbbench/lbbench/results"
)

// TestConcurrentRunsSeeEachOther: two runs started together on this host
// (two default runs started so both finished "valid", each unaware of
// the other) each record the other, pid and scenario, and are invalid
// for it; the one that started second says so on the terminal at once.
func TestConcurrentRunsSeeEachOther(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two scenarios at once (about 4 s)")
	}
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	type ended struct {
		pid    int
		stderr string
		res    *results.Results
		err    error
	}
	got := make([]ended, 2)
	var wg sync.WaitGroup
	for i := range got {
		name := fmt.Sprintf("beside%d", i)
		scen := filepath.Join(dir, name+".yaml")
		// 3 s of load each: started together, their loads overlap.
		body := strings.Replace("name: "+name+"\n"+smallWorkers+"variants:\n  - {name: rp, topology: reuseport}\nrepeat: 1\n", "duration: 1s", "duration: 3s", 1)
		if err := os.WriteFile(scen, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name)
		cmd := invocation{args: []string{"run", scen, "-o", out}, env: []string{neighbours.EnvDir + "=" + runs}}.start(t)
		wg.Go(func() {
			o := &got[i]
			o.pid = cmd.process.Pid
			if o.err = cmd.wait(); o.err == nil {
				o.res, o.err = results.ReadFile(filepath.Join(out, "results.json"))
			}
			o.stderr = cmd.stderr.String()
		})
	}
	wg.Wait()
	warned := 0
	for i, o := range got {
		if o.err != nil {
			t.Fatalf("run %d: %v\n%s", i, o.err, o.stderr)
		}
		other := got[1-i]
		if strings.Contains(o.stderr, fmt.Sprintf("WARNING: another lbbench run is running on this host (pid %d, scenario beside%d, since ", other.pid, 1-i)) {
			warned++
		}
		if len(o.res.Runs) != 1 {
			t.Fatalf("run %d: %d runs, want 1", i, len(o.res.Runs))
		}
		r := o.res.Runs[0]
		want := fmt.Sprintf("pid %d, scenario beside%d, since ", other.pid, 1-i)
		if len(r.Concurrent) != 1 || !strings.HasPrefix(r.Concurrent[0], want) {
			t.Errorf("run %d: concurrent %q, want the other run (%s...)", i, r.Concurrent, want)
		}
		if r.Valid || !strings.HasPrefix(r.Invalid[0], "another lbbench run was running on this host during the load ("+want) {
			t.Errorf("run %d: valid=%v reasons %q; want invalid for the other run", i, r.Valid, r.Invalid)
		}
		if !strings.Contains(o.stderr, "INVALID: another lbbench run was running on this host") {
			t.Errorf("run %d: its progress line does not say why it is invalid:\n%s", i, o.stderr)
		}
		// The server's steal was measured too, on every CPU it could use
		// (0 outside a virtual machine).
		if r.Server == nil || r.Server.CPUs < 1 {
			t.Errorf("run %d: server %+v, want its CPUs and steal", i, r.Server)
		}
	}
	if warned == 0 {
		t.Errorf("neither run warned of the other when it started:\n%s\n%s", got[0].stderr, got[1].stderr)
	}
	if entries, _ := os.ReadDir(runs); len(entries) != 0 {
		t.Errorf("registry not empty after both runs: %v", entries)
	}
	waitNoProcs(t)
}

package main

// End-to-end test of event-loop workers (serve --accept-when idle) in
// every listen mode, on the built binary with real child processes.

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServeAcceptWhenIdle runs two single-task workers with --accept-when
// idle in each listen mode and makes one busy with a 1.5 s request. While
// it is busy, its /stats must show no connection accepted but the long
// one's; in shared mode every new connection must land on the idle
// worker; connections sent to the busy worker's own endpoint (reuseport,
// ports, unix) must wait and be served by it once it frees.
func TestServeAcceptWhenIdle(t *testing.T) {
	for _, mode := range []string{"shared", "reuseport", "ports", "unix"} {
		t.Run(mode, func(t *testing.T) {
			if testing.Short() && mode != "shared" {
				t.Skip("-short: shared mode only")
			}
			sp := startServe(t, append(listenArgs(t, mode, 2), "--concurrency", "1", "--accept-when", "idle")...)
			if got := sp.log(t); !strings.Contains(got, "accept when idle") {
				t.Fatalf("ready line does not say accept when idle:\n%s", got)
			}
			_, rep := sp.stats(t)
			// The busy worker: worker 0 by its own endpoint, or in shared
			// mode whichever takes the long request.
			longDone := make(chan string, 1)
			go func() {
				code, w, err := fetch(rep.Status[0].Endpoint, "/work?ms=1500")
				if err != nil || code != 200 {
					longDone <- "error"
					return
				}
				longDone <- w
			}()
			var busy int
			deadline := time.Now().Add(5 * time.Second)
			for {
				_, st := sp.stats(t)
				found := false
				for _, w := range st.Workers {
					if w.Active == 1 {
						busy, found = w.Index, true
					}
				}
				if found {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no worker took the long request")
				}
				time.Sleep(10 * time.Millisecond)
			}
			_, before := sp.stats(t)
			connsBefore := before.Workers[busy].Connections
			start := time.Now()
			type answer struct {
				worker string
				at     time.Duration
			}
			var mu sync.Mutex
			var answers []answer
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					// Shared: the one socket; the others: the busy
					// worker's own endpoint (reuseport: its port, which
					// the kernel hashes to either worker).
					code, w, err := fetch(rep.Status[busy].Endpoint, "/work?ms=5")
					if err != nil || code != 200 {
						t.Errorf("short request: %d %v", code, err)
						return
					}
					mu.Lock()
					answers = append(answers, answer{w, time.Since(start)})
					mu.Unlock()
				})
			}
			time.Sleep(500 * time.Millisecond)
			_, during := sp.stats(t)
			if got := during.Workers[busy].Connections; got != connsBefore {
				t.Errorf("busy worker %d accepted %d connections while busy", busy, got-connsBefore)
			}
			wg.Wait()
			if got := <-longDone; got != strconv.Itoa(busy) {
				t.Errorf("long request answered by %q, want %d", got, busy)
			}
			longEnd := time.Since(start)
			servedByBusy := 0
			for _, a := range answers {
				if a.worker == strconv.Itoa(busy) {
					servedByBusy++
					if mode == "shared" {
						t.Errorf("shared: a new connection was served by the busy worker %d", busy)
					}
					if a.at < 900*time.Millisecond {
						t.Errorf("busy worker %d answered a new connection after %v, while its long request (ended by %v) was in service", busy, a.at, longEnd)
					}
				}
			}
			if mode == "ports" || mode == "unix" {
				if servedByBusy != 8 {
					t.Errorf("%s: %d of 8 requests to the busy worker's endpoint served by it, want 8 (served once it freed)", mode, servedByBusy)
				}
			}
			t.Logf("%s: busy worker %d; %d of 8 new connections served by it after it freed; answers %v", mode, busy, servedByBusy, answers)
		})
	}
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/lbbench/lbbench/internal/dockertest"
	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/job"
	"github.com/lbbench/lbbench/results"
)

// TestDockerWorkersFailedIsAFailedRun: the workers' container of the
// first of two docker runs is killed (SIGKILL), or paused (docker pause: it
// is alive and answers nothing), during the attack. The run is recorded as
// failed (the workers' container named, exit status 137, or "stopped
// answering ... paused"), its measurement kept, the second run completes,
// lbbench exits 5 (runs failed), and nothing of the session is left.
func TestDockerWorkersFailedIsAFailedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("brings containers up")
	}
	dockerParallel(t)
	for _, tc := range []struct {
		name  string
		fault func(api *client.Client, victim string) error
		exit  string
	}{
		{"killed", func(api *client.Client, victim string) error {
			return api.ContainerKill(context.Background(), victim, "KILL")
		}, "exit status 137"},
		{"paused", func(api *client.Client, victim string) error {
			return api.ContainerPause(context.Background(), victim)
		}, "stopped answering: no stats within 5s; it was paused; killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, victim, log := dockerFault(t, tc.fault)
			failed, next := res.Runs[0], res.Runs[1]
			if failed.Valid || len(failed.Failed) == 0 || failed.Failed[0].Process != "workers (container "+victim+")" || failed.Failed[0].Exit != tc.exit {
				t.Errorf("run with the workers %s: valid=%v failed=%+v, want the workers' container, %q", tc.name, failed.Valid, failed.Failed, tc.exit)
			}
			if failed.Requests == 0 {
				t.Errorf("the failed run's measurement was not kept")
			}
			if next.Requests == 0 || len(next.Failed) != 0 {
				t.Errorf("the next run: requests=%d failed=%v (%q), want a completed run with nothing dead", next.Requests, next.Failed, next.Invalid)
			}
			if !strings.Contains(log, "1 of 2 runs failed") {
				t.Errorf("run does not say a run failed:\n%s", log)
			}
		})
	}
}

// dockerFault runs two docker runs of one proxy variant and applies fault
// to the first run's workers' container once its attack has begun. It
// checks that lbbench exits 5 and leaves nothing of the session, and
// returns the results (both runs recorded), the victim's name and
// lbbench's output.
func dockerFault(t *testing.T, fault func(api *client.Client, victim string) error) (*results.Results, string, string) {
	t.Helper()
	c := dockertest.Connect(t)
	api, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	scen := writeDockerScenario(t, "5s", "  - {name: proxy, topology: proxy}")
	b, _ := os.ReadFile(scen)
	os.WriteFile(scen, []byte(strings.Replace(string(b), "repeat: 1", "repeat: 2", 1)), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	cmd := start(t, "run", "--driver", "docker", scen, "-o", out)
	buf := cmd.out
	var session string
	deadline := time.Now().Add(60 * time.Second)
	for session == "" {
		if m := sessionRE.FindStringSubmatch(buf.String()); m != nil && attacking(api, c, m[1]) {
			session = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no attack within a minute:\n%s", buf.String())
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}
	victim := "lbbench-" + session + "-001-workers-0"
	if err := fault(api, victim); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cmd.done:
		if err := cmd.err; testkit.ExitStatus(err) != job.ExitFailedRuns {
			t.Fatalf("run: exit %d (%v), want 5: a run failed\n%s", testkit.ExitStatus(err), err, buf.String())
		}
	case <-time.After(120 * time.Second):
		t.Fatalf("run did not end:\n%s", buf.String())
	}
	dockertest.AssertGone(t, c, session)
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Runs) != 2 {
		t.Fatalf("complete=%v with %d runs; error %q\n%s", res.Complete, len(res.Runs), res.Error, buf.String())
	}
	return res, victim, buf.String()
}

package main

// End-to-end tests of "lbbench run --driver docker" against the real Docker
// daemon: every topology in containers, and nothing left behind after a
// normal run, Ctrl-C, or kill -9 followed by "lbbench clean".

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/lbbench/lbbench/driver/docker"
	"github.com/lbbench/lbbench/internal/dockertest"
	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/topologies"
)

const dockerScenario = `name: docker-all
workers: {count: 3, concurrency: 1}
workload:
  arrival: {kind: poisson, rate: 150}
  duration: %DURATION%
  warmup: 300ms
  classes:
    - {name: read, weight: 9, path: /work, service: {dist: fixed, value: 2ms}}
    - {name: event, weight: 1, path: /event, service: {dist: fixed, value: 4ms}}
  clients: {connections: 12}
variants:
%VARIANTS%
repeat: 1
validity: {max_send_lag_p99: 100ms}
`

// allTopologies is one variant of every topology, and nginx and HAProxy
// (run from images built from this machine's engines, which make setup
// installs).
const allTopologies = `  - {name: reuseport, topology: reuseport}
  - {name: shared, topology: shared, accept: blocking}
  - {name: proxy, topology: proxy, proxy: {policy: least_conn}}
  - {name: unix, topology: unix, proxy: {policy: round_robin}}
  - {name: front, topology: shared-unix, accept: poll, proxy: {close_after: 2}}
  - {name: l4, topology: l4, proxy: {policy: least_conn}}
  - {name: l7, topology: l7, proxy: {policy: p2c, upstream_keepalive: false}}
  - name: pools
    topology: l7-pools
    proxy:
      pools:
        - {name: read, prefix: /, workers: [0, 1]}
        - {name: write, prefix: /event, workers: [2]}
  - {name: nginx, topology: proxy, proxy: {engine: nginx, policy: least_conn}}
  - {name: haproxy, topology: unix, proxy: {engine: haproxy, policy: least_conn, upstream_keepalive: false}}`

// dockerSlots lets two docker tests run at a time.
var dockerSlots = make(chan struct{}, 2)

// dockerParallel runs a docker test in the parallel phase, beside the
// behaviour tests of local processes, with at most one other docker test:
// four sessions side by side came up more slowly than the tests wait for
// on this 2-CPU machine.
func dockerParallel(t *testing.T) {
	t.Parallel()
	dockerSlots <- struct{}{}
	t.Cleanup(func() { <-dockerSlots })
}

func writeDockerScenario(t *testing.T, duration, variants string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "docker.yaml")
	s := strings.NewReplacer("%DURATION%", duration, "%VARIANTS%", variants).Replace(dockerScenario)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDockerEveryTopology(t *testing.T) {
	if testing.Short() {
		t.Skip("brings 10 variants up in containers")
	}
	dockerParallel(t)
	c := dockertest.Connect(t)
	out := filepath.Join(t.TempDir(), "out")
	text, code := runBin(t, "", nil, "run", "-q", "--driver", "docker", "--engine-image", "nginx=host", "--engine-image", "haproxy=host",
		writeDockerScenario(t, "1s", allTopologies), "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, text)
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	ce := res.Env.Containers
	if res.Env.Driver != "docker" || ce == nil || ce.Session == "" || !strings.HasPrefix(ce.Image, "lbbench:") || len(ce.Placement) != 2 {
		t.Fatalf("environment %+v, containers %+v", res.Env, ce)
	}
	dockertest.AssertGone(t, c, ce.Session)
	seen := map[string]bool{}
	for _, r := range res.Runs {
		seen[r.Variant] = true
		if r.Requests < 100 || r.Errors != 0 || !strings.HasPrefix(r.Entry, "http://server:") || r.BringUp <= 0 || r.TearDown <= 0 {
			t.Errorf("%s: %d requests, %d errors, entry %s, bring-up %s, tear-down %s", r.ID, r.Requests, r.Errors, r.Entry, r.BringUp, r.TearDown)
		}
		// Each worker served some of the load: the workers' own counters
		// came back from inside the run's network.
		var served uint64
		for _, w := range r.Workers {
			served += w.Requests
		}
		if served < r.Requests {
			t.Errorf("%s: workers counted %d requests, the generator %d", r.ID, served, r.Requests)
		}
		// The generator's container and the server's share the host's
		// CLOCK_MONOTONIC and boot ID: every request's wait is measured,
		// through every proxy (nginx and HAProxy pass the stamps on).
		if r.Wait == nil {
			t.Errorf("%s: no wait measured across containers of one host", r.ID)
		} else if n := uint64(r.Wait.TotalCount()); n != r.Requests-r.Errors {
			t.Errorf("%s: wait measured for %d of %d requests (%d errors) across containers of one host", r.ID, n, r.Requests, r.Errors)
		}
		// Every container's log is in the output directory.
		roles := []string{"generator", topologies.RoleWorkers}
		if r.Proxy != nil || r.Engine != nil {
			roles = append(roles, topologies.RoleProxy)
		}
		for _, role := range roles {
			// nginx logs into its working directory, not its output.
			fi, err := os.Stat(filepath.Join(out, "logs", r.ID+"-"+role+".log"))
			if err != nil || (fi.Size() == 0 && r.Engine == nil) {
				t.Errorf("%s: log of %s: %v (empty: %v)", r.ID, role, err, err == nil && fi.Size() == 0)
			}
		}
	}
	for _, e := range []string{"nginx", "haproxy"} {
		if !strings.Contains(res.Env.Engines[e], "(image lbbench-"+e+":") {
			t.Errorf("engine versions %v: want %s's, from its image", res.Env.Engines, e)
		}
	}
	for _, v := range []string{"reuseport", "shared", "proxy", "unix", "front", "l4", "l7", "pools", "nginx", "haproxy"} {
		if !seen[v] {
			t.Errorf("no run of %s", v)
		}
	}
	for _, f := range []string{"report.html", "summary.txt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

var sessionRE = regexp.MustCompile(`session ([0-9a-f]{8})`)

// startDockerRun starts a long docker run and returns it, its output and its
// session once the load is flowing: the generator container runs "lbbench
// attack".
func startDockerRun(t *testing.T, out string) (*running, *testkit.Buffer, string) {
	t.Helper()
	c := dockertest.Connect(t)
	// The daemon lists a container's processes (docker top), wherever it runs.
	api, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	cmd := start(t, "run", "--driver", "docker", writeDockerScenario(t, "30s", "  - {name: proxy, topology: proxy}"), "-o", out)
	buf := cmd.out
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := sessionRE.FindStringSubmatch(buf.String()); m != nil && attacking(api, c, m[1]) {
			return cmd, buf, m[1]
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the run's generator did not start its attack within a minute:\n%s", buf.String())
	return nil, nil, ""
}

// attacking reports whether the generator container of session runs
// "lbbench attack".
func attacking(api *client.Client, c *docker.Client, session string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rep, err := c.Managed(ctx, session)
	if err != nil {
		return false
	}
	for _, name := range rep.Of(docker.KindContainers) {
		if !strings.Contains(name, "-"+docker.RoleGenerator+"-") {
			continue
		}
		top, err := api.ContainerTop(ctx, name, nil)
		if err != nil {
			continue
		}
		for _, proc := range top.Processes {
			if strings.Contains(strings.Join(proc, " "), docker.ImageBinary+" "+loadgen.AttackSubcommand+" ") {
				return true
			}
		}
	}
	return false
}

func TestDockerInterruptLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("brings containers up")
	}
	dockerParallel(t)
	c := dockertest.Connect(t)
	out := filepath.Join(t.TempDir(), "out")
	cmd, buf, session := startDockerRun(t, out)
	cmd.signal(syscall.SIGINT)
	select {
	case <-cmd.done:
		if err := cmd.err; testkit.ExitStatus(err) != 130 {
			t.Errorf("exit %v, want 130 (interrupted)\n%s", err, buf.String())
		}
	case <-time.After(45 * time.Second):
		t.Fatalf("still running 45 s after SIGINT\n%s", buf.String())
	}
	dockertest.AssertGone(t, c, session)
	// The partial results are there, and say what happened.
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil || res.Complete || res.Error == "" {
		t.Errorf("results after SIGINT: %+v, %v", res, err)
	}
	if !strings.Contains(buf.String(), "interrupted") {
		t.Errorf("no word of the interruption:\n%s", buf.String())
	}
}

func TestDockerKillThenClean(t *testing.T) {
	if testing.Short() {
		t.Skip("brings containers up")
	}
	dockerParallel(t)
	c := dockertest.Connect(t)
	cmd, _, session := startDockerRun(t, filepath.Join(t.TempDir(), "out"))
	cmd.process.Kill()
	cmd.wait()
	// kill -9 gives lbbench no chance to clean up: its containers run on.
	if rep, err := c.Managed(context.Background(), session); err != nil || len(rep.Of(docker.KindContainers)) == 0 {
		// Another lbbench's start may have removed them already.
		t.Logf("after kill -9: %+v, %v", rep, err)
	}
	text, code := runBin(t, "", nil, "clean", "--session", session)
	if code != 0 {
		t.Fatalf("clean: exit %d\n%s", code, text)
	}
	t.Log(text)
	dockertest.AssertGone(t, c, session)
}

// TestDockerDoubleInterruptLeavesNothing: a second Ctrl-C right after the
// first cuts the containers' stop short (the hard stop); the forced
// removal still takes every container, the volume and the network.
func TestDockerDoubleInterruptLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("brings containers up")
	}
	dockerParallel(t)
	c := dockertest.Connect(t)
	out := filepath.Join(t.TempDir(), "out")
	cmd, buf, session := startDockerRun(t, out)
	cmd.signal(syscall.SIGINT)
	time.Sleep(100 * time.Millisecond)
	cmd.signal(syscall.SIGINT)
	start := time.Now()
	select {
	case <-cmd.done:
		if err := cmd.err; testkit.ExitStatus(err) != 130 {
			t.Errorf("exit %v, want 130 (interrupted)\n%s", err, buf.String())
		}
	case <-time.After(45 * time.Second):
		t.Fatalf("still running 45 s after a double SIGINT\n%s", buf.String())
	}
	t.Logf("exited %s after the second SIGINT", time.Since(start))
	if !strings.Contains(buf.String(), "interrupted again: killing") {
		t.Errorf("no word of the second interruption:\n%s", buf.String())
	}
	dockertest.AssertGone(t, c, session)
	if _, err := results.ReadFile(filepath.Join(out, "results.json")); err != nil {
		t.Errorf("no results.json after a double SIGINT: %v", err)
	}
}

package docker_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/driver/docker"
	"github.com/lbbench/lbbench/internal/dockertest"
	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

var exe string // a static lbbench, built once

func TestMain(m *testing.M) {
	// As buildStatic builds it, linked again only when its sources changed.
	var remove func()
	var err error
	if exe, remove, err = testkit.BuildStatic("github.com/lbbench/lbbench/cmd/lbbench", "-trimpath"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	c := m.Run()
	remove()
	os.Exit(c)
}

// buildStatic builds lbbench without cgo into exe.
func buildStatic(exe, ldflags string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", exe, "github.com/lbbench/lbbench/cmd/lbbench")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build lbbench: %v\n%s", err, out)
	}
	return nil
}

func TestCheckStatic(t *testing.T) {
	if err := docker.CheckStatic(exe); err != nil {
		t.Errorf("static build: %v", err)
	}
	// A binary built with cgo, as "go build" makes it by default on a
	// machine with a C compiler, is refused with advice.
	dyn := "/bin/ls"
	err := docker.CheckStatic(dyn)
	if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("CheckStatic(%s) = %v, want an error that says how to build a static binary", dyn, err)
	}
}

func TestImageBuildsWithoutRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image on the daemon (about 7 s)")
	}
	c := dockertest.Connect(t)
	ctx := context.Background()
	// A binary of its own, so that the image is new and really built.
	unique := filepath.Join(t.TempDir(), "lbbench")
	if err := buildStatic(unique, "-X main.version=image-test-"+fmt.Sprint(time.Now().UnixNano())); err != nil {
		t.Fatal(err)
	}
	tag, built, err := c.EnsureImage(ctx, unique)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { docker.RemoveImage(c, tag) })
	if !built {
		t.Fatalf("image %s of a fresh binary was not built", tag)
	}
	info, err := docker.InspectImage(ctx, c, tag)
	if err != nil {
		t.Fatal(err)
	}
	// FROM scratch: one layer, the binary; nothing came from a registry.
	if info.Layers != 1 || info.User != docker.ImageUser || len(info.Entrypoint) != 1 || info.Entrypoint[0] != docker.ImageBinary {
		t.Errorf("image %s: %+v; want 1 layer, user %s, entrypoint %s", tag, info, docker.ImageUser, docker.ImageBinary)
	}
	data, _ := os.ReadFile(unique)
	if tag != docker.ImageTag(data) {
		t.Errorf("tag %s, want the content hash %s", tag, docker.ImageTag(data))
	}
	// Unchanged binary: not rebuilt.
	again, built, err := c.EnsureImage(ctx, unique)
	if err != nil || built || again != tag {
		t.Errorf("second EnsureImage = %s, built %v, %v; want %s from the cache", again, built, err, tag)
	}
}

// plan renders topology for n workers on d.
func plan(t *testing.T, d *docker.Driver, v scenario.Variant, n int, id string) topologies.Plan {
	t.Helper()
	v = v.WithDefaults()
	p, err := topologies.Render(v, scenario.Workers{Count: n}.WithDefaults(), d)
	if err != nil {
		t.Fatal(err)
	}
	p.ID = id
	return p
}

// oneSecond is 100 requests of 1 ms over one second.
func oneSecond(t *testing.T) workloads.Spec {
	t.Helper()
	spec := workloads.Spec{
		Arrival:  workloads.Arrival{Kind: "constant", RatePerSec: 100},
		Duration: time.Second,
		Classes:  []workloads.Class{{Name: "c", Weight: 1, Service: workloads.Service{Dist: "fixed", Value: time.Millisecond}}},
	}.WithDefaults()
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestUpAttackDown(t *testing.T) {
	if testing.Short() {
		t.Skip("brings a proxy topology up in containers and loads it")
	}
	c := dockertest.Connect(t)
	ctx := context.Background()
	logs := t.TempDir()
	d, err := docker.New(ctx, c, exe, logs, docker.WithGenerators(2))
	if err != nil {
		t.Fatal(err)
	}
	defer dockertest.AssertGone(t, c, d.Session())
	p := plan(t, d, scenario.Variant{Name: "lc", Topology: scenario.Proxy}, 3, "001-lc-r1")
	dep, err := d.UpPlan(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer dep.Down(ctx)
	if !strings.HasPrefix(dep.Entry(), "http://"+docker.ServerHost+":") {
		t.Errorf("entry %s", dep.Entry())
	}
	// Containers, named and labelled, with a non-root user, read-only root
	// filesystem and the driver's CPU placement.
	boxes, err := docker.Containers(ctx, c, d.Session())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"generator": true, "workers": true, "proxy": true}
	for _, b := range boxes {
		if !want[b.Role] || b.Name != "lbbench-"+d.Session()+"-001-"+b.Role+"-0" || !b.ReadOnly || b.User != docker.ImageUser || !b.Running {
			t.Errorf("container %+v", b)
		}
		if len(b.CapDrop) != 1 || b.CapDrop[0] != "ALL" || !slices.Contains(b.SecurityOpt, "no-new-privileges:true") ||
			b.PidsLimit == nil || *b.PidsLimit != docker.DefaultPidsLimit || b.Memory != docker.DefaultMemory {
			t.Errorf("container %s not hardened with the default limits: %+v", b.Name, b)
		}
		if b.NanoCPUs == 0 && b.Cpuset == "" {
			t.Errorf("container %s has neither a cpuset nor a CPU limit", b.Name)
		}
		delete(want, b.Role)
	}
	if len(want) != 0 {
		t.Errorf("missing containers %v among %+v", want, boxes)
	}

	m, err := dep.Attack(ctx, oneSecond(t))
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests < 90 || m.Errors != 0 || m.Generator.Processes != 2 {
		t.Errorf("attack: %d requests, %d errors, %d generator processes; want about 100, 0, 2", m.Requests, m.Errors, m.Generator.Processes)
	}
	st, err := dep.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var served uint64
	for _, w := range st.Workers {
		served += w.Requests
	}
	if len(st.Workers) != 3 || st.Proxy == nil || served < m.Requests || st.Proxy.Decisions < m.Requests {
		t.Errorf("stats: %d workers served %d, proxy %+v; want 3 workers and at least %d requests", len(st.Workers), served, st.Proxy, m.Requests)
	}
	if err := dep.Down(ctx); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"workers", "proxy", "generator"} {
		b, err := os.ReadFile(filepath.Join(logs, "001-lc-r1-"+role+".log"))
		if err != nil || len(b) == 0 {
			t.Errorf("log of %s: %q, %v", role, b, err)
		}
	}
}

func TestEarlyExitShowsLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("brings containers up (about 5 s)")
	}
	c := dockertest.Connect(t)
	ctx := context.Background()
	d, err := docker.New(ctx, c, exe, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dockertest.AssertGone(t, c, d.Session())
	p := plan(t, d, scenario.Variant{Name: "r", Topology: scenario.ReusePort}, 2, "001-r-r1")
	// An unknown listen mode: serve exits at once, saying so.
	p.Processes[0].Serve.Listen = "no-such-listen"
	start := time.Now()
	_, err = d.UpPlan(ctx, p)
	if err == nil {
		t.Fatal("Up succeeded with a worker that cannot start")
	}
	if !strings.Contains(err.Error(), "exited early") || !strings.Contains(err.Error(), "no-such-listen") {
		t.Errorf("error does not say the container exited and show its log:\n%v", err)
	}
	if el := time.Since(start); el > docker.ReadyTimeout/2 {
		t.Errorf("Up took %s to notice the exit; it should not wait for the %s deadline", el, docker.ReadyTimeout)
	}
}

func TestEngineNeedsImage(t *testing.T) {
	c := dockertest.Connect(t)
	ctx := context.Background()
	d, err := docker.New(ctx, c, exe, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := topologies.Plan{ID: "001-n-r1", Processes: []topologies.Process{{Role: "proxy", Engine: &topologies.EngineCommand{Engine: "nginx", Path: "/usr/sbin/nginx"}}}}
	if _, err := d.UpPlan(ctx, p); err == nil || !strings.Contains(err.Error(), "nginx") {
		t.Errorf("Up of an engine plan = %v, want a clear error", err)
	}
	dockertest.AssertGone(t, c, d.Session())
}

func TestCleanRemovesOnlyOrphans(t *testing.T) {
	c := dockertest.Connect(t)
	ctx := context.Background()
	img, _, err := c.EnsureImage(ctx, exe)
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)
	live, dead := "live"+suffix, "dead"+suffix
	host, _ := os.Hostname()
	// A live owner (this process) and a dead one (no such pid), as kill -9
	// leaves them.
	if err := docker.MakeObjects(ctx, c, img, live, ""); err != nil {
		t.Fatal(err)
	}
	defer c.Clean(ctx, driver.CleanFilter{All: true, Session: live})
	if err := docker.MakeObjects(ctx, c, img, dead, host+"/999999999/1"); err != nil {
		t.Fatal(err)
	}
	defer c.Clean(ctx, driver.CleanFilter{All: true, Session: dead})
	for _, s := range []string{live, dead} {
		if rep, err := c.Managed(ctx, s); err != nil || !oneEach(rep) {
			t.Fatalf("session %s before clean: %+v, %v", s, rep, err)
		}
	}

	// A new driver removes what dead lbbench processes left, and only that.
	if _, err := docker.New(ctx, c, exe, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	dockertest.AssertGone(t, c, dead)
	if rep, _ := c.Managed(ctx, live); !oneEach(rep) {
		t.Errorf("a new driver removed a live lbbench's objects: %+v left", rep)
	}
	if rep, err := c.Clean(ctx, driver.CleanFilter{Session: live}); err != nil || !rep.Empty() {
		t.Errorf("clean without All removed %+v (%v) of a live lbbench", rep, err)
	}
	rep, err := c.Clean(ctx, driver.CleanFilter{All: true, Session: live})
	if err != nil || !oneEach(rep) {
		t.Errorf("clean with All: %+v, %v", rep, err)
	}
	dockertest.AssertGone(t, c, live)
}

func TestEngineImageErrors(t *testing.T) {
	c := dockertest.Connect(t)
	ctx := context.Background()
	for _, tc := range []struct {
		images map[string]string
		want   []string
	}{
		{nil, []string{"--engine-image nginx=IMAGE", "pulls nothing"}},
		{map[string]string{"nginx": "lbbench-no-such-image:1"}, []string{"lbbench-no-such-image:1", "not on this machine", "does not pull"}},
	} {
		d, err := docker.New(ctx, c, exe, t.TempDir(), docker.WithEngineImages(tc.images))
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.FindEngine(ctx, "nginx")
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("images %v: FindEngine = %v, want an error with %q", tc.images, err, w)
			}
		}
		dockertest.AssertGone(t, c, d.Session())
	}
}

// TestEnginesInContainers runs nginx and HAProxy in containers, from
// images built FROM scratch out of this machine's engines (make setup
// installs them), in front of the workers.
func TestEnginesInContainers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds engine images and runs nginx and HAProxy in containers")
	}
	c := dockertest.Connect(t)
	ctx := context.Background()
	for _, engine := range []string{scenario.Nginx, scenario.HAProxy} {
		t.Run(engine, func(t *testing.T) {
			if _, err := exec.LookPath(engine); err != nil {
				if _, err2 := os.Stat("/usr/sbin/" + engine); err2 != nil && os.Getenv("CI") == "" {
					t.Skipf("%s is not installed (make setup installs it)", engine)
				}
			}
			d, err := docker.New(ctx, c, exe, t.TempDir(), docker.WithEngineImages(map[string]string{engine: docker.HostImage}))
			if err != nil {
				t.Fatal(err)
			}
			defer dockertest.AssertGone(t, c, d.Session())
			bin, err := d.FindEngine(ctx, engine)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(bin.Version, "(image lbbench-"+engine+":") {
				t.Errorf("version %q does not name the image", bin.Version)
			}
			off := false
			p := plan(t, d, scenario.Variant{Name: "e", Topology: scenario.Proxy, Proxy: scenario.ProxySpec{Engine: engine, Policy: "least_conn", UpstreamKeepAlive: &off}}, 2, "001-e-r1")
			dep, err := d.UpPlan(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			defer dep.Down(ctx)
			m, err := dep.Attack(ctx, oneSecond(t))
			if err != nil {
				t.Fatal(err)
			}
			if m.Requests < 90 || m.Errors != 0 {
				t.Errorf("%d requests, %d errors through %s", m.Requests, m.Errors, engine)
			}
			st, err := dep.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var served uint64
			for _, w := range st.Workers {
				served += w.Requests
			}
			if served < m.Requests {
				t.Errorf("workers served %d of %d requests", served, m.Requests)
			}
			if engine == scenario.HAProxy && (st.Engine == nil || len(st.Engine.HAProxy) == 0) {
				t.Errorf("no HAProxy stats: %+v", st.Engine)
			}
			if engine == scenario.Nginx && bin.StubStatus && (st.Engine == nil || st.Engine.Nginx == nil || st.Engine.Nginx.Requests < m.Requests) {
				t.Errorf("nginx stub_status %+v, want at least %d requests", st.Engine, m.Requests)
			}
			if err := dep.Down(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestContainersHardened brings a proxy topology up with overridden
// limits and inspects every container the driver created: no capability
// (all dropped, none added, not privileged), no-new-privileges, the pids
// and memory limits asked for (swap included), a read-only root and a
// non-root user; each run directory mounted from this machine is owned by
// the containers' user with mode 0755 (never 0777). Then it kills the
// workers' container: Stats records it dead with its exit status instead
// of failing, and Down still removes everything.
func TestContainersHardened(t *testing.T) {
	if testing.Short() {
		t.Skip("brings a proxy topology up in containers")
	}
	c := dockertest.Connect(t)
	ctx := context.Background()
	logs := t.TempDir()
	if _, err := docker.New(ctx, c, exe, logs, docker.WithLimits(docker.Limits{Pids: 8})); err == nil || !strings.Contains(err.Error(), "pids limit 8 is below the minimum 16") {
		t.Errorf("a pids limit of 8: %v", err)
	}
	const pids, mem = 512, 384 << 20
	d, err := docker.New(ctx, c, exe, logs, docker.WithLimits(docker.Limits{Pids: pids, Memory: mem}))
	if err != nil {
		t.Fatal(err)
	}
	defer dockertest.AssertGone(t, c, d.Session())
	p := plan(t, d, scenario.Variant{Name: "lc", Topology: scenario.Proxy}, 2, "001-lc-r1")
	dep, err := d.UpPlan(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer dep.Down(ctx)
	boxes, err := docker.Containers(ctx, c, d.Session())
	if err != nil {
		t.Fatal(err)
	}
	if len(boxes) != 3 {
		t.Fatalf("%d containers, want generator, workers and proxy: %+v", len(boxes), boxes)
	}
	for _, b := range boxes {
		if len(b.CapDrop) != 1 || b.CapDrop[0] != "ALL" || len(b.CapAdd) != 0 || b.Privileged {
			t.Errorf("%s: capabilities drop %v add %v privileged %v, want all dropped", b.Name, b.CapDrop, b.CapAdd, b.Privileged)
		}
		if !slices.Contains(b.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("%s: security options %v lack no-new-privileges", b.Name, b.SecurityOpt)
		}
		if b.PidsLimit == nil || *b.PidsLimit != pids || b.Memory != mem || b.MemorySwap != mem {
			t.Errorf("%s: pids limit %v, memory %d, memory+swap %d; want %d, %d, %d", b.Name, b.PidsLimit, b.Memory, b.MemorySwap, pids, mem, mem)
		}
		if !b.ReadOnly || b.User == "" || strings.HasPrefix(b.User, "0:") || b.User == "0" || b.User == "root" {
			t.Errorf("%s: read-only root %v, user %q", b.Name, b.ReadOnly, b.User)
		}
		if len(b.Binds) == 0 {
			t.Errorf("%s: no run directory mounted", b.Name)
		}
		for target, src := range b.Binds {
			if target == docker.ImageBinary {
				continue
			}
			fi, err := os.Lstat(src)
			if err != nil {
				t.Fatal(err)
			}
			st := fi.Sys().(*syscall.Stat_t)
			wantUID := uint32(os.Geteuid())
			if wantUID == 0 {
				wantUID = 65534
			}
			if !fi.IsDir() || fi.Mode().Perm() != 0o755 || st.Uid != wantUID {
				t.Errorf("%s: %s (at %s) is %v owned by %d, want a directory 0755 owned by %d", b.Name, src, target, fi.Mode(), st.Uid, wantUID)
			}
		}
	}

	if err := docker.KillContainer(ctx, c, "lbbench-"+d.Session()+"-001-workers-0"); err != nil {
		t.Fatal(err)
	}
	// The proxy shares the dead container's network namespace: reading its
	// counters may fail too, which the run records as one more reason.
	st, err := dep.Stats(ctx)
	t.Logf("stats after the workers' container died: dead %+v, error %v", st.Dead, err)
	if len(st.Dead) != 1 || !strings.HasPrefix(st.Dead[0].Process, "workers (container ") || st.Dead[0].Exit != "exit status 137" {
		t.Errorf("dead %+v, want the workers' container, exit status 137", st.Dead)
	}
	if err := dep.Down(ctx); err != nil {
		t.Fatal(err)
	}
}

// oneEach reports whether rep names one container, one network and one
// volume.
func oneEach(rep driver.Objects) bool {
	return len(rep.Of(docker.KindContainers)) == 1 && len(rep.Of(docker.KindNetworks)) == 1 && len(rep.Of(docker.KindVolumes)) == 1
}

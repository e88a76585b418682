package main

// The kubernetes driver on a real cluster: the three-node test cluster of
// scripts/k8s-testbed.sh (package kubetest), with lbbench's image imported
// into its nodes.

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/driver/kube"
	"github.com/lbbench/lbbench/internal/kubetest"
	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/results"
)

// kubeArgs are the flags that point run at the test cluster.
func kubeArgs(c *kubetest.Cluster) []string {
	return []string{"--driver", "kubernetes", "--kubeconfig", c.Kubeconfig, "--image", c.Image}
}

// checkPlacement fails t unless every run's server pod ran on the first
// node and every generator pod on another.
func checkPlacement(t *testing.T, res *results.Results, c *kubetest.Cluster, generators int) {
	t.Helper()
	for _, r := range res.Runs {
		var gens int
		for _, p := range r.Pods {
			switch p.Role {
			case kube.RoleServer:
				if p.Node != c.Nodes[0] {
					t.Errorf("%s: server pod %s on %s, want %s", r.ID, p.Name, p.Node, c.Nodes[0])
				}
			case kube.RoleGenerator:
				gens++
				if p.Node == c.Nodes[0] {
					t.Errorf("%s: generator pod %s on the server's node %s", r.ID, p.Name, p.Node)
				}
			}
			if p.CPURequest != p.CPULimit || p.QOS != "Guaranteed" {
				t.Errorf("%s: %s: CPU request %s, limit %s, QoS %s; want whole CPUs, Guaranteed", r.ID, p.Name, p.CPURequest, p.CPULimit, p.QOS)
			}
		}
		if gens != generators {
			t.Errorf("%s: %d generator pods recorded, want %d: %+v", r.ID, gens, generators, r.Pods)
		}
	}
}

// engineRequests is the number of client requests an engine's counters
// show: nginx's stub_status, HAProxy's busiest frontend.
func engineRequests(e *results.EngineStats) uint64 {
	if e == nil {
		return 0
	}
	if e.Nginx != nil {
		return e.Nginx.Requests
	}
	var n uint64
	for _, r := range e.HAProxy {
		if r.Name == "FRONTEND" {
			n = max(n, r.Requests)
		}
	}
	return n
}

// kubeGenerators: --generators 2 runs two generator pods, one on
// each of the nodes other than the server's, whose histograms merge
// losslessly: the run's request count is the sum of theirs.
func kubeGenerators(t *testing.T, c *kubetest.Cluster) {
	out := filepath.Join(t.TempDir(), "out")
	text, code := runBin(t, "", nil, append([]string{"run", "-q", "--generators", "2", "--pod-cpus", "generator=1", writeDockerScenario(t, "2s", "  - {name: proxy, topology: proxy, proxy: {policy: least_conn}}"), "-o", out}, kubeArgs(c)...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, text)
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkPlacement(t, res, c, 2)
	r := res.Runs[0]
	genNodes := map[string]bool{}
	for _, p := range r.Pods {
		if p.Role == kube.RoleGenerator {
			genNodes[p.Node] = true
		}
	}
	if len(genNodes) != 2 {
		t.Errorf("the two generator pods ran on %v, want two nodes (the cluster's other nodes, in turn)", genNodes)
	}
	var sum, hist uint64
	for i := range 2 {
		path := filepath.Join(out, "logs", r.ID+"-generator", "generator-"+string(rune('0'+i))+".json")
		m, err := results.ReadMeasurement(path)
		if err != nil {
			t.Fatalf("generator %d: %v", i, err)
		}
		if m.Requests == 0 {
			t.Errorf("generator %d sent nothing", i)
		}
		sum += m.Requests
		hist += uint64(m.Latency.TotalCount())
	}
	if r.Requests != sum || uint64(r.Latency.TotalCount()) != hist {
		t.Errorf("merged %d requests (%d in the histogram), the two generators %d (%d)", r.Requests, r.Latency.TotalCount(), sum, hist)
	}
	kubetest.AssertGone(t, c, res.Env.Kubernetes.Session)
}

// kubeRefuses: what the driver cannot do is refused before any
// pod starts, with a message that says what to do.
func kubeRefuses(t *testing.T, c *kubetest.Cluster) {
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"no image", "--image-repo", []string{"--driver", "kubernetes", "--kubeconfig", c.Kubeconfig}},
		{"nginx without image", "--engine-image nginx=IMAGE", append(kubeArgs(c), writeDockerScenario(t, "1s", "  - {name: nginx, topology: proxy, proxy: {engine: nginx}}"))},
		{"nginx=host without repo", "needs --image-repo", append(kubeArgs(c), "--engine-image", "nginx=host", writeDockerScenario(t, "1s", "  - {name: nginx, topology: proxy, proxy: {engine: nginx}}"))},
		{"engine image not there", "cannot pull image " + c.Registry + "/e2e-none:1", append(kubeArgs(c), "--engine-image", "haproxy="+c.Registry+"/e2e-none:1", writeDockerScenario(t, "1s", "  - {name: haproxy, topology: proxy, proxy: {engine: haproxy}}"))},
		{"no cluster", "kubeconfig", []string{"--driver", "kubernetes", "--kubeconfig", filepath.Join(t.TempDir(), "none"), "--image", c.Image}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, code := runBin(t, "", nil, append([]string{"run", "-q", "-o", filepath.Join(t.TempDir(), "out")}, tc.args...)...)
			if code != 2 || !strings.Contains(text, tc.want) {
				t.Errorf("exit %d, want 2 and a message with %q:\n%s", code, tc.want, text)
			}
		})
	}
	// With one node the generators would share the server's CPUs:
	// refused, unless told they may. The other nodes are cordoned for it.
	for _, n := range c.Nodes[1:] {
		cordon(t, c, n, true)
		defer cordon(t, c, n, false)
	}
	text, code := runBin(t, "", nil, append([]string{"run", "-q", "-o", filepath.Join(t.TempDir(), "out"), writeDockerScenario(t, "1s", "  - {name: reuseport, topology: reuseport}")}, kubeArgs(c)...)...)
	if code != 2 || !strings.Contains(text, "no other node") {
		t.Errorf("one node: exit %d, want 2 and \"no other node\":\n%s", code, text)
	}
	// Told they may, they pass that check; the test cluster's server node
	// has one CPU, too few for two pods of whole CPUs, which is refused
	// before any pod is made (TestPlace shows a shared node that fits).
	text, code = runBin(t, "", nil, append([]string{"run", "-q", "--kube-share-node", "--pod-cpus", "server=1,generator=1", "-o", filepath.Join(t.TempDir(), "out"), writeDockerScenario(t, "1s", "  - {name: reuseport, topology: reuseport}")}, kubeArgs(c)...)...)
	if want := "node " + c.Nodes[0] + " can give 1 CPUs, but the pods placed on it need 2"; code != 2 || strings.Contains(text, "no other node") || !strings.Contains(text, want) {
		t.Errorf("one node, --kube-share-node: exit %d, want 2 and %q:\n%s", code, want, text)
	}
}

// checkServed fails t unless run r's requests were answered, every one.
// Whether the run was valid (the generator kept its schedule) is not
// asked: these tests run beside the other behaviour tests, where the
// generator may fall behind; the tests that measure on the cluster run
// alone (zz_kube_measure_e2e_test.go).
func checkServed(t *testing.T, r *results.Run) {
	t.Helper()
	if r.Requests == 0 || r.Errors != 0 {
		t.Errorf("%s: %d requests, %d errors", r.ID, r.Requests, r.Errors)
	}
	if !r.Valid {
		t.Logf("%s invalid beside the other tests: %v", r.ID, r.Invalid)
	}
}

// cordon marks node unschedulable (or not) through the API.
func cordon(t *testing.T, c *kubetest.Cluster, node string, on bool) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": on}})
	if err := kubetest.PatchNode(c, node, patch); err != nil {
		t.Fatal(err)
	}
}

// startKubeRun starts a long run on the cluster (a 6 s warm-up, then 20 s
// of load) and returns it, its output and its session once its pods run.
func startKubeRun(t *testing.T, c *kubetest.Cluster, out string) (*running, *testkit.Buffer, string) {
	t.Helper()
	scen := writeDockerScenario(t, "20s", "  - {name: proxy, topology: proxy}")
	b, err := os.ReadFile(scen)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(scen, []byte(strings.Replace(string(b), "warmup: 300ms", "warmup: 6s", 1)), 0o644)
	cmd := start(t, append([]string{"run", scen, "-o", out}, kubeArgs(c)...)...)
	buf := cmd.out
	t.Cleanup(func() {
		// A test that failed before it ended the run: Ctrl-C, so that
		// lbbench takes its pods down (start's kill would leave them
		// holding the nodes' CPUs for the tests after); this runs first.
		select {
		case <-cmd.done:
			return
		default:
		}
		cmd.signal(os.Interrupt)
		select {
		case <-cmd.done:
		case <-time.After(60 * time.Second):
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if m := sessionRE.FindStringSubmatch(buf.String()); m != nil && kubetest.Running(c, m[1]) >= 2 {
			return cmd, buf, m[1]
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the run's pods did not run within 90 s:\n%s", buf.String())
	return nil, nil, ""
}

// kubeInterruptLeavesNothing: Ctrl-C during the warm-up and
// during the measured load; either way lbbench exits 130, says so, writes
// its partial results and leaves no pod, service or config map.
func kubeInterruptLeavesNothing(t *testing.T, c *kubetest.Cluster) {
	for _, tc := range []struct {
		phase string
		after time.Duration // after the pods run
	}{{"warm-up", 3 * time.Second}, {"load", 10 * time.Second}} {
		t.Run(tc.phase, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cmd, buf, session := startKubeRun(t, c, out)
			time.Sleep(tc.after)
			cmd.signal(syscall.SIGINT)
			select {
			case <-cmd.done:
				if err := cmd.err; testkit.ExitStatus(err) != 130 {
					t.Errorf("exit %v, want 130 (interrupted)\n%s", err, buf.String())
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("still running 60 s after SIGINT\n%s", buf.String())
			}
			kubetest.AssertGone(t, c, session)
			res, err := results.ReadFile(filepath.Join(out, "results.json"))
			if err != nil || res.Complete || res.Error == "" {
				t.Errorf("results after SIGINT: %+v, %v", res, err)
			}
		})
	}
}

// kubeKillThenClean: a SIGKILLed lbbench leaves its pods
// running; "lbbench clean --driver kubernetes" removes them.
func kubeKillThenClean(t *testing.T, c *kubetest.Cluster) {
	cmd, _, session := startKubeRun(t, c, filepath.Join(t.TempDir(), "out"))
	time.Sleep(8 * time.Second) // into the load
	cmd.process.Kill()
	cmd.wait()
	if n := kubetest.Running(c, session); n == 0 {
		t.Errorf("after kill -9 no pod of session %s runs: the test shows nothing", session)
	}
	text, code := runBin(t, "", nil, "clean", "--driver", "kubernetes", "--kubeconfig", c.Kubeconfig, "--session", session)
	if code != 0 || !strings.Contains(text, "pods") {
		t.Fatalf("clean: exit %d\n%s", code, text)
	}
	t.Log(text)
	kubetest.AssertGone(t, c, session)
}

// kubeRBAC: docs/kubernetes-rbac.yaml grants what the driver
// needs: a run and a clean as its service account succeed (the test
// cluster authorizes by RBAC), and the same role without pods/exec is
// refused with the API server's "forbidden", leaving nothing behind.
func kubeRBAC(t *testing.T, c *kubetest.Cluster) {
	manifest, err := os.ReadFile(filepath.Join("..", "..", "docs", "kubernetes-rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := kubetest.Grant(c, manifest); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := kubetest.Revoke(c, manifest); err != nil {
			t.Error(err)
		}
	})
	kc, err := kubetest.ServiceAccountKubeconfig(c, "lbbench", "lbbench", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	scen := writeDockerScenario(t, "1s", "  - {name: proxy, topology: proxy}")
	args := func(out string) []string {
		return []string{"run", "-q", scen, "-o", out, "--driver", "kubernetes", "--kubeconfig", kc, "--image", c.Image}
	}
	out := filepath.Join(t.TempDir(), "out")
	text, code := runBin(t, "", nil, args(out)...)
	if code != 0 {
		t.Fatalf("as the service account: exit %d\n%s", code, text)
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ns := res.Env.Kubernetes.Namespace; ns != "lbbench" {
		t.Errorf("namespace %q, want the kubeconfig context's, lbbench", ns)
	}
	checkServed(t, &res.Runs[0])
	if text, code := runBin(t, "", nil, "clean", "--driver", "kubernetes", "--kubeconfig", kc); code != 0 {
		t.Errorf("clean as the service account: exit %d\n%s", code, text)
	}

	// The same role without pods/exec: the generator cannot be driven.
	execRule := "  - apiGroups: [\"\"]\n    # exec upgrades to a WebSocket with a GET (or SPDY with a POST): both\n    # verbs, so that either protocol is allowed.\n    resources: [\"pods/exec\"]\n    verbs: [\"create\", \"get\"]\n"
	if !strings.Contains(string(manifest), execRule) {
		t.Fatalf("docs/kubernetes-rbac.yaml has no pods/exec rule as this test knows it:\n%s", manifest)
	}
	if err := kubetest.Grant(c, []byte(strings.Replace(string(manifest), execRule, "", 1))); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(t.TempDir(), "out")
	text, code = runBin(t, "", nil, args(out)...)
	if code == 0 || !strings.Contains(text, "forbidden") {
		t.Errorf("without pods/exec: exit %d, want a failure that says forbidden:\n%s", code, text)
	}
	if n := kubetest.Managed(t, c, "lbbench"); n != 0 {
		t.Errorf("without pods/exec: %d objects left in namespace lbbench", n)
	}
}

// kubeImageRepo: with --image-repo the run builds this binary's
// image, pushes it to a real registry (the test cluster's) and the nodes
// pull it from there; lbbench image pushes the same image (the same
// digest: the build is reproducible) and the registry serves it.
func kubeImageRepo(t *testing.T, c *kubetest.Cluster) {
	repo := c.Registry + "/lbbench-e2e"
	text, code := runBin(t, "", nil, "image", "--image-repo", repo)
	if code != 0 {
		t.Fatalf("image: exit %d\n%s", code, text)
	}
	f := strings.Fields(text)
	if len(f) != 2 || !strings.HasPrefix(f[0], repo+":") || !strings.HasPrefix(f[1], "sha256:") {
		t.Fatalf("image printed %q, want REF DIGEST", text)
	}
	ref, digest := f[0], f[1]
	req, err := http.NewRequest(http.MethodHead, "http://"+c.Registry+"/v2/lbbench-e2e/manifests/"+strings.TrimPrefix(ref, repo+":"), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Docker-Content-Digest"); resp.StatusCode != http.StatusOK || got != digest {
		t.Fatalf("registry: %s, digest %q; lbbench image printed %s", resp.Status, got, digest)
	}
	archive := filepath.Join(t.TempDir(), "img.tar")
	text, code = runBin(t, "", nil, "image", "--image-repo", repo, "--archive", archive)
	if code != 0 || !strings.Contains(text, digest) {
		t.Errorf("the archive's image is not the pushed one (exit %d): %s, pushed %s", code, text, digest)
	}

	out := filepath.Join(t.TempDir(), "out")
	text, code = runBin(t, "", nil, "run", "-q", writeDockerScenario(t, "1s", "  - {name: reuseport, topology: reuseport}"), "-o", out,
		"--driver", "kubernetes", "--kubeconfig", c.Kubeconfig, "--image-repo", repo)
	if code != 0 {
		t.Fatalf("run --image-repo: exit %d\n%s", code, text)
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Env.Kubernetes.Image != ref {
		t.Errorf("the pods ran %q, want the pushed %q", res.Env.Kubernetes.Image, ref)
	}
	checkServed(t, &res.Runs[0])
}

// TestKubernetes: what the driver does on the test cluster that is judged
// by behaviour, not by measurement (placement of two generators, refusals,
// Ctrl-C, kill -9 then clean, RBAC, --image-repo), then the cluster is
// taken down. These run in the parallel phase, beside the other
// behaviour tests, while the runs that measure on the cluster
// (zz_kube_measure_e2e_test.go) run one at a time, last of the serial
// phase, when the cluster comes up. Inside, they run one after another:
// the test cluster gives each run's pods whole CPUs, so two runs at once
// would leave pods pending; and kubeImageRepo run before the others left
// their pods unable to pull the image the cluster was loaded with.
func TestKubernetes(t *testing.T) {
	if testing.Short() {
		t.Skip("brings pods up on the test cluster")
	}
	t.Parallel()
	c := kubetest.Start(t, bin)
	for _, tc := range []struct {
		name string
		test func(*testing.T, *kubetest.Cluster)
	}{
		{"Generators", kubeGenerators},
		{"Refuses", kubeRefuses},
		{"InterruptLeavesNothing", kubeInterruptLeavesNothing},
		{"KillThenClean", kubeKillThenClean},
		{"RBAC", kubeRBAC},
		{"ImageRepo", kubeImageRepo},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, c) })
	}
	t.Run("TestbedDown", kubeTestbedDown)
}

// kubeTestbedDown, after the last test that uses it: the test cluster the
// tests brought up is taken down here rather than after the whole
// package, and taking it down leaves none of its processes, bridges or
// files. A cluster that was up before the tests is a developer's, and
// stays up.
func kubeTestbedDown(t *testing.T) {
	if !kubetest.Started() {
		t.Skip("the test cluster was up before the tests: left up")
	}
	dir := kubetest.Dir()
	if dir == "" {
		t.Fatal("the test cluster has no directory")
	}
	start := time.Now()
	if err := kubetest.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("down in %v", time.Since(start).Round(time.Millisecond))
	// What is left: live processes naming the cluster's directory (etcd,
	// the apiserver, the registry, containerds, kubelets, shims), the
	// nodes' bridges, the directory.
	left := testkit.Strings(testkit.LiveProcs(func(p testkit.Proc) bool {
		return strings.Contains(strings.Join(p.Args, " "), dir+"/")
	}))
	links, _ := filepath.Glob("/sys/class/net/lbk8s*")
	for _, l := range links {
		left = append(left, "bridge "+filepath.Base(l))
	}
	if _, err := os.Stat(dir); err == nil {
		left = append(left, "directory "+dir)
	}
	if len(left) != 0 {
		t.Errorf("the test cluster left behind:\n%s", strings.Join(left, "\n"))
	}
}

// Package kubetest gives tests a real Kubernetes cluster: the three-node test
// cluster of scripts/k8s-testbed.sh (kube-apiserver and kubelets built from
// k8s.io/kubernetes, Debian's etcd and containerd), with the image of the
// lbbench binary under test imported into every node. When the cluster
// cannot start, a test is skipped on a developer's machine but fails when
// the CI environment variable is set: CI must run the Kubernetes tests, not
// skip them.
package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lbbench/lbbench/driver/kube"
)

// Cluster is the running test cluster.
type Cluster struct {
	// Kubeconfig is the cluster's kubeconfig file; Image lbbench's image
	// as the nodes have it.
	Kubeconfig, Image string
	// Nodes are the node names, the server's first.
	Nodes []string
	// Script is the path of scripts/k8s-testbed.sh.
	Script string
	// Registry is the cluster's image registry (host:port, plain HTTP),
	// which every node pulls from.
	Registry string
}

var (
	mu      sync.Mutex
	cluster *Cluster
	images  = map[string]string{} // lbbench binary -> imported image
	started bool                  // this process brought the cluster up
	failure error
	// dir is the cluster's directory (LBBENCH_K8S_DIR), which every
	// process of the cluster names in its command line.
	dir string
)

// Start returns the test cluster with the image of the static lbbench
// binary exe on its nodes, bringing the cluster up on first use (the
// script is idempotent: a cluster already up is used as it is). Stop
// takes down a cluster Start brought up.
func Start(t testing.TB, exe string) *Cluster {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	fail := func(err error) {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so the Kubernetes tests must run: %v", err)
		}
		t.Skipf("no test cluster (set CI to make this a failure): %v", err)
	}
	if failure != nil {
		fail(failure)
	}
	if cluster == nil {
		c, err := up(exe)
		if err != nil {
			failure = err
			fail(err)
		}
		cluster = c
	}
	if _, ok := images[exe]; !ok {
		ref, err := load(cluster.Script, exe)
		if err != nil {
			fail(err)
		}
		images[exe] = ref
	}
	c := *cluster
	c.Image = images[exe]
	return &c
}

// Stop takes the test cluster down when this process brought it up
// (TestMain calls it after the tests, and a test may call it before), so
// nothing of it stays running.
func Stop() error {
	mu.Lock()
	defer mu.Unlock()
	if !started || cluster == nil {
		return nil
	}
	out, err := script(cluster.Script, "", "down")
	if err != nil {
		return fmt.Errorf("kubetest: down: %v\n%s", err, out)
	}
	// A later Start brings a new cluster up, and imports images again.
	started, cluster = false, nil
	clear(images)
	return nil
}

// Started reports whether this process brought the test cluster up (and
// Stop has not taken it down yet); false for a cluster that was up before.
func Started() bool {
	mu.Lock()
	defer mu.Unlock()
	return started
}

// Dir is the directory of the test cluster Start found or brought up
// (LBBENCH_K8S_DIR), which every process of the cluster names in its
// command line; "" before Start.
func Dir() string {
	mu.Lock()
	defer mu.Unlock()
	return dir
}

func up(exe string) (*Cluster, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the test cluster needs root (it starts containerd, kubelets and bridges)")
	}
	sc, err := findScript()
	if err != nil {
		return nil, err
	}
	dir = os.Getenv("LBBENCH_K8S_DIR")
	if dir == "" {
		dir = "/tmp/lbbench-k8s"
	}
	if _, err := os.Stat(filepath.Join(dir, "kubeconfig")); err != nil {
		started = true
	}
	if out, err := script(sc, exe, "up"); err != nil {
		return nil, fmt.Errorf("%s up: %v\n%s", sc, err, out)
	}
	port := os.Getenv("LBBENCH_K8S_REGISTRY_PORT")
	if port == "" {
		port = "15000"
	}
	c := &Cluster{Kubeconfig: filepath.Join(dir, "kubeconfig"), Script: sc, Registry: "127.0.0.1:" + port}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kc, err := kube.Connect(ctx, c.Kubeconfig, "default")
	if err != nil {
		return nil, err
	}
	if c.Nodes, err = kc.ReadyNodes(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// load writes the image archive of exe and imports it into every node.
func load(sc, exe string) (string, error) {
	dir, err := os.MkdirTemp("", "lbbench-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	archive := filepath.Join(dir, "lbbench.tar")
	out, err := exec.Command(exe, "image", "--archive", archive).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("lbbench image: %v\n%s", err, out)
	}
	ref := strings.Fields(string(out))[0]
	if out, err := script(sc, exe, "load", archive); err != nil {
		return "", fmt.Errorf("%s load: %v\n%s", sc, err, out)
	}
	return ref, nil
}

func script(sc, exe string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{sc}, args...)...)
	cmd.Env = append(os.Environ(), "LBBENCH_BIN="+exe)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// findScript finds scripts/k8s-testbed.sh in the module's root, above the
// test's working directory.
func findScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "scripts", "k8s-testbed.sh")
			if _, err := os.Stat(p); err != nil {
				return "", err
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("kubetest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// AssertGone fails t if the cluster's namespace holds anything labelled
// with session.
func AssertGone(t testing.TB, c *Cluster, session string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kc, err := kube.Connect(ctx, c.Kubeconfig, "default")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := kc.Managed(ctx, session)
	if err != nil {
		t.Fatalf("list session %s: %v", session, err)
	}
	if !rep.Empty() {
		t.Errorf("session %s left behind: %s", session, rep)
	}
}

// Running is the number of pods of session that run.
func Running(c *Cluster, session string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kc, err := kube.Connect(ctx, c.Kubeconfig, "default")
	if err != nil {
		return 0
	}
	n, _ := kc.RunningPods(ctx, session)
	return n
}

// PatchNode applies a strategic merge patch to node.
func PatchNode(c *Cluster, node string, patch []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kc, err := kube.Connect(ctx, c.Kubeconfig, "default")
	if err != nil {
		return err
	}
	return kc.PatchNode(ctx, node, patch)
}

// Managed is the number of pods, services and config maps labelled
// lbbench.managed in namespace ns, of any session.
func Managed(t testing.TB, c *Cluster, ns string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kc, err := kube.Connect(ctx, c.Kubeconfig, ns)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := kc.Managed(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	return rep.Count()
}

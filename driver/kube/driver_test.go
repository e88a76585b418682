package kube

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/topologies"
)

// node is a node with cpus allocatable CPUs, ready or not.
func node(name string, cpus int64, ready bool, cordoned bool) *corev1.Node {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{Unschedulable: cordoned},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(cpus, resource.DecimalSI)},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}},
		},
	}
}

func TestPlace(t *testing.T) {
	for _, tc := range []struct {
		name       string
		nodes      []*corev1.Node
		cfg        config
		wantServer string
		wantGens   []string
		wantErr    string
		defaulted  bool   // CPUs left to their defaults
		wantCPUs   string // server,generator; empty: DefaultCPUs
	}{
		{name: "generators on the other nodes, in turn",
			nodes:      []*corev1.Node{node("b", 4, true, false), node("a", 4, true, false), node("c", 4, true, false)},
			cfg:        config{Generators: 3},
			wantServer: "a", wantGens: []string{"b", "c"}},
		{name: "not ready and cordoned nodes are left out",
			nodes:      []*corev1.Node{node("a", 4, false, false), node("b", 4, true, false), node("c", 4, true, true), node("d", 4, true, false)},
			cfg:        config{Generators: 1},
			wantServer: "b", wantGens: []string{"d"}},
		{name: "the server's node named",
			nodes:      []*corev1.Node{node("a", 4, true, false), node("b", 4, true, false)},
			cfg:        config{Generators: 1, ServerNode: "b"},
			wantServer: "b", wantGens: []string{"a"}},
		{name: "an unknown server node",
			nodes:   []*corev1.Node{node("a", 4, true, false), node("b", 4, true, false)},
			cfg:     config{Generators: 1, ServerNode: "z"},
			wantErr: `server node "z" is not a ready node (ready: a, b)`},
		{name: "one node",
			nodes:   []*corev1.Node{node("a", 4, true, false), node("b", 4, true, true)},
			cfg:     config{Generators: 1},
			wantErr: "no other node"},
		{name: "one node, shared",
			nodes:      []*corev1.Node{node("a", 4, true, false)},
			cfg:        config{Generators: 1, ShareNode: true},
			wantServer: "a", wantGens: []string{"a"}},
		{name: "one node, shared, too few CPUs for both",
			nodes:   []*corev1.Node{node("a", 3, true, false)},
			cfg:     config{Generators: 1, ShareNode: true},
			wantErr: "node a can give 3 CPUs, but the pods placed on it need 4"},
		{name: "two generators on one other node need its CPUs",
			nodes:   []*corev1.Node{node("a", 2, true, false), node("b", 3, true, false)},
			cfg:     config{Generators: 2},
			wantErr: "node b can give 3 CPUs, but the pods placed on it need 4"},
		{name: "one-CPU nodes, defaults fitted",
			nodes:      []*corev1.Node{node("a", 1, true, false), node("b", 1, true, false)},
			cfg:        config{Generators: 1},
			defaulted:  true,
			wantServer: "a", wantGens: []string{"b"}, wantCPUs: "1,1"},
		{name: "two generators on a two-CPU node, defaults fitted",
			nodes:      []*corev1.Node{node("a", 4, true, false), node("b", 2, true, false)},
			cfg:        config{Generators: 2},
			defaulted:  true,
			wantServer: "a", wantGens: []string{"b"}, wantCPUs: "2,1"},
		{name: "two generators on a one-CPU node, even at one CPU each",
			nodes:     []*corev1.Node{node("a", 1, true, false), node("b", 1, true, false)},
			cfg:       config{Generators: 2},
			defaulted: true,
			wantErr:   "node b can give 1 CPUs, but the pods placed on it need 2"},
		{name: "sharing one node: defaults not fitted",
			nodes:     []*corev1.Node{node("a", 2, true, false)},
			cfg:       config{Generators: 1, ShareNode: true},
			defaulted: true,
			wantErr:   "node a can give 2 CPUs, but the pods placed on it need 4"},
		{name: "no ready node",
			nodes:   []*corev1.Node{node("a", 4, false, false)},
			cfg:     config{Generators: 1},
			wantErr: "no node is ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			for _, n := range tc.nodes {
				if _, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			cfg := tc.cfg
			cfg.CPUs = maps.Clone(DefaultCPUs)
			d := &Driver{c: &Client{cs: cs, Namespace: "default"}, cfg: cfg}
			if tc.defaulted {
				d.defaulted = map[string]bool{RoleServer: true, RoleGenerator: true}
			}
			d.cfg.Logf = func(string, ...any) {}
			err := d.place(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.server != tc.wantServer || strings.Join(d.genNodes, ",") != strings.Join(tc.wantGens, ",") {
				t.Errorf("server %s, generators %v; want %s, %v", d.server, d.genNodes, tc.wantServer, tc.wantGens)
			}
			if tc.wantCPUs == "" {
				tc.wantCPUs = fmt.Sprintf("%d,%d", DefaultCPUs[RoleServer], DefaultCPUs[RoleGenerator])
			}
			if got := fmt.Sprintf("%d,%d", d.cfg.CPUs[RoleServer], d.cfg.CPUs[RoleGenerator]); got != tc.wantCPUs {
				t.Errorf("CPUs server,generator %s, want %s", got, tc.wantCPUs)
			}
			if !strings.Contains(d.placement, d.server) {
				t.Errorf("placement %q does not name the server's node", d.placement)
			}
		})
	}
}

// TestPodSpec: a pod asks for whole CPUs with requests equal to limits
// (Guaranteed), runs unprivileged on a read-only root, is placed by name,
// and carries every label clean selects by.
func TestPodSpec(t *testing.T) {
	d := &Driver{cfg: config{CPUs: map[string]int{RoleServer: 3, RoleGenerator: 1}, MemoryMiB: 512}, session: "s1", owner: "h.1.2"}
	dep := &deployment{d: d, run: "001-x-r1", image: "lbbench.local/lbbench:1"}
	c := dep.container("workers-0", podArgs([]string{"serve", "--listen", PodIPPlaceholder + ":8080"}))
	p := dep.pod("lbbench-s1-001-server", RoleServer, "node1", 10, []corev1.Container{c})
	if p.Spec.NodeName != "node1" {
		t.Errorf("node %q", p.Spec.NodeName)
	}
	r := p.Spec.Resources
	if got := r.Requests.Cpu().String() + "/" + r.Limits.Cpu().String() + " " + r.Limits.Memory().String(); got != "3/3 512Mi" {
		t.Errorf("resources %s, want 3/3 512Mi", got)
	}
	if !r.Requests.Memory().Equal(*r.Limits.Memory()) {
		t.Errorf("memory request %s, limit %s", r.Requests.Memory(), r.Limits.Memory())
	}
	sc := p.Spec.Containers[0].SecurityContext
	if *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || !*sc.RunAsNonRoot || len(sc.Capabilities.Drop) != 1 || *p.Spec.SecurityContext.RunAsUser != 65534 {
		t.Errorf("security context %+v, pod's %+v", sc, p.Spec.SecurityContext)
	}
	if *p.Spec.AutomountServiceAccountToken {
		t.Error("the service account token is mounted")
	}
	if got := p.Spec.Containers[0].Args[2]; got != "$("+PodIPEnv+"):8080" {
		t.Errorf("listen address %q: the placeholder is not the pod's address variable", got)
	}
	for _, k := range []string{driver.LabelManaged, driver.LabelSession, driver.LabelRun, driver.LabelOwner, driver.LabelRole} {
		if p.Labels[k] == "" {
			t.Errorf("label %s missing: %v", k, p.Labels)
		}
	}
}

// TestClean: clean removes what lbbench processes that no longer run left
// (here an owner on this host whose pid is not running), keeps what this
// process and other hosts own, and with All removes every managed object
// (never an unlabelled one).
func TestClean(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	host, _ := os.Hostname()
	dead := host + ownerSep + "999999999" + ownerSep + "1"
	mine := ownerLabel()
	other := "another-host" + ownerSep + "1" + ownerSep + "1"
	meta := func(name, owner string, managed bool) metav1.ObjectMeta {
		l := map[string]string{driver.LabelOwner: owner, driver.LabelSession: "s"}
		if managed {
			l[driver.LabelManaged] = "true"
		}
		return metav1.ObjectMeta{Name: name, Namespace: "default", Labels: l}
	}
	core := cs.CoreV1()
	for _, p := range []*corev1.Pod{{ObjectMeta: meta("dead", dead, true)}, {ObjectMeta: meta("mine", mine, true)}, {ObjectMeta: meta("other", other, true)}, {ObjectMeta: meta("foreign", dead, false)}} {
		if _, err := core.Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := core.Services("default").Create(ctx, &corev1.Service{ObjectMeta: meta("dead-svc", dead, true)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("dead-cm", dead, true)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := &Client{cs: cs, Namespace: "default"}
	rep, err := c.Clean(ctx, driver.CleanFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rep.Of(KindPods), rep.Of(KindServices), rep.Of(KindConfigMaps)); got != "[dead] [dead-svc] [dead-cm]" {
		t.Errorf("clean removed %s, want [dead] [dead-svc] [dead-cm]", got)
	}
	rep, err = c.Clean(ctx, driver.CleanFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	pods := rep.Of(KindPods)
	slices.Sort(pods)
	if got := fmt.Sprint(pods); got != "[mine other]" {
		t.Errorf("clean --all removed pods %s, want [mine other]", got)
	}
	left, err := core.Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 1 || left.Items[0].Name != "foreign" {
		t.Errorf("pods left %v, want only the unlabelled one", left.Items)
	}
}

// TestNewValidatesOptions: New refuses options the driver cannot run
// with, before it makes anything, with the error the user sees.
func TestNewValidatesOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{name: "too many generators", opts: []Option{WithImage("lbbench:1"), WithGenerators(65)}, want: "kubernetes: generators: must be between 1 and 64"},
		{name: "no generator", opts: []Option{WithImage("lbbench:1"), WithGenerators(0)}, want: "kubernetes: generators: must be between 1 and 64 (each is a process on this machine; more only compete for its CPUs), got 0"},
		{name: "raw", opts: []Option{WithRaw("out/raw"), WithImage("lbbench:1")}, want: "kubernetes: --raw needs --driver local"},
		{name: "unknown role", opts: []Option{WithImage("lbbench:1"), WithPodCPUs(map[string]int{"proxy": 1})}, want: `kubernetes: CPUs for "proxy": the roles are server and generator`},
		{name: "no image", want: "kubernetes: the driver needs lbbench's image in the cluster"},
		{name: "no node", opts: []Option{WithImage("lbbench:1")}, want: "kubernetes: no node is ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{cs: fake.NewClientset(), Namespace: "default"}
			_, err := New(context.Background(), c, "/bin/true", t.TempDir(), tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestRejectedPodMadeAgain: a pod its kubelet refused for want of CPU (a
// pod of the run before still stopping on the node) is deleted and made
// again, and waitRunning returns it once it runs; a pod that failed
// otherwise stays an error.
func TestRejectedPodMadeAgain(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	d := &Driver{c: &Client{cs: cs, Namespace: "default"}}
	dep := &deployment{d: d, run: "001", plan: topologies.Plan{ID: "001-x-r1"}}
	api := cs.CoreV1().Pods("default")
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "lbbench-s-001-server", Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "workers"}}},
	}
	refused := want.DeepCopy()
	refused.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "OutOfcpu", Message: "Pod was rejected: Node didn't have enough resource: cpu"}
	if _, err := api.Create(ctx, refused, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The kubelet's part: once the pod is made again, it runs.
	go func() {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			p, err := api.Get(ctx, want.Name, getOpts)
			if err == nil && p.Status.Phase == "" {
				p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7",
					ContainerStatuses: []corev1.ContainerStatus{{Name: "workers", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
				api.UpdateStatus(ctx, p, metav1.UpdateOptions{})
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	got, err := dep.waitRunning(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.PodIP != "10.0.0.7" {
		t.Errorf("got pod %+v, want the one made again, running", got.Status)
	}

	// Failed for another reason: an error, not made again.
	failed := want.DeepCopy()
	failed.Name = "lbbench-s-002-server"
	failed.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "the node was low on memory"}
	if _, err := api.Create(ctx, failed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dep.waitRunning(ctx, failed); err == nil || !strings.Contains(err.Error(), "Evicted") {
		t.Errorf("evicted pod: %v, want its failure", err)
	}
	if rejected(failed) || !rejected(refused) {
		t.Errorf("rejected: evicted %v, OutOfcpu %v; want false, true", rejected(failed), rejected(refused))
	}
}

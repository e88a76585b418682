package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
)

// Timeouts of the driver.
const (
	ReadyTimeout = driver.DefaultReadyTimeout
	StopTimeout  = driver.DefaultStopTimeout
)

var getOpts = metav1.GetOptions{}

// Roles of a run's pods and containers.
const (
	RoleServer    = results.PodServer
	RoleGenerator = results.PodGenerator
)

// PodIPPlaceholder stands for the server pod's address in a rendered plan
// (Host): the containers' arguments get it from the pod's own status
// through the LBBENCH_POD_IP variable, and the driver puts the address
// in the entry, health and stats URLs once the pod has one. It is a name
// that never resolves (.invalid), so a plan that kept it would fail
// loudly.
const PodIPPlaceholder = "lbbench-pod-ip.invalid"

// PodIPEnv is the variable that tells every container its pod's address.
const PodIPEnv = "LBBENCH_POD_IP"

// config is what the options set.
type config struct {
	// Image is the reference of lbbench's image in the cluster (lbbench
	// image prints it). With ImageRepo instead, the driver builds the
	// image of its own binary and pushes it there.
	Image, ImageRepo string
	// Generators is the number of generator pods, each with one share of
	// the load; at least 1.
	Generators int
	// CPUs is each pod's whole CPUs by role (request = limit, Guaranteed
	// QoS): server, generator. MemoryMiB is each pod's memory (request =
	// limit).
	CPUs      map[string]int
	MemoryMiB int64
	// ShareNode lets the generators run on the server's node when the
	// cluster has only one.
	ShareNode bool
	// ServerNode names the server's node (default: the first ready node
	// by name).
	ServerNode string
	// EngineImages names the image each proxy engine runs from.
	EngineImages map[string]string
	// Raw is a directory for raw per-request lines, which the driver's
	// generators do not write.
	Raw string
	// Live receives the generator's live figures when there is one.
	Live func(loadgen.LiveStats)
	// Logf gets the driver's notices.
	Logf func(format string, args ...any)
}

// Option configures New. Options only set fields; New validates them.
type Option func(*config)

// WithImage runs the pods from lbbench's image ref as the nodes have it
// (lbbench image prints it).
func WithImage(ref string) Option { return func(c *config) { c.Image = ref } }

// WithImageRepo builds the image of the driver's lbbench binary (and of
// another build's, and of driver.HostEngineImage engines) and pushes it to
// repo, REGISTRY/NAME, instead of WithImage.
func WithImageRepo(repo string) Option { return func(c *config) { c.ImageRepo = repo } }

// WithGenerators offers each run's load from k generator pods, each with
// 1/k of the rate, their histograms merged losslessly; k of 1, the
// default, runs one; less than 1 or more than driver.MaxGenerators is an
// error.
func WithGenerators(k int) Option { return func(c *config) { c.Generators = k } }

// WithPodCPUs sets each role's pod's whole CPUs (request = limit,
// Guaranteed QoS), by role: RoleServer, RoleGenerator; a role left out
// keeps DefaultCPUs.
func WithPodCPUs(cpus map[string]int) Option { return func(c *config) { c.CPUs = cpus } }

// WithPodMemoryMiB sets each pod's memory in MiB (request = limit);
// 0 means DefaultMemoryMiB.
func WithPodMemoryMiB(mib int64) Option { return func(c *config) { c.MemoryMiB = mib } }

// WithShareNode lets the generators run on the server's node when the
// cluster has only one ready node.
func WithShareNode(share bool) Option { return func(c *config) { c.ShareNode = share } }

// WithServerNode names the server pod's node (default: the first ready
// node by name).
func WithServerNode(node string) Option { return func(c *config) { c.ServerNode = node } }

// WithEngineImages names the image each proxy engine (nginx, haproxy)
// runs from: one the nodes can pull or have, with the engine on its
// PATH, or driver.HostEngineImage to build one from this machine's engine
// and push it to WithImageRepo's repository.
func WithEngineImages(images map[string]string) Option {
	return func(c *config) { c.EngineImages = images }
}

// WithRaw asks for one line per measured request in dir, which the
// driver's generators do not write: New refuses a dir that is not empty.
func WithRaw(dir string) Option { return func(c *config) { c.Raw = dir } }

// WithLive calls f with the live figures of a run's generator about once
// per second, when there is one generator.
func WithLive(f func(loadgen.LiveStats)) Option { return func(c *config) { c.Live = f } }

// WithLog sends the driver's notices (an image pushed, leftovers removed,
// CPUs lowered to fit) to logf.
func WithLog(logf func(format string, args ...any)) Option {
	return func(c *config) { c.Logf = logf }
}

// DefaultCPUs are each role's pod's CPUs: two for the server (its workers
// and proxy share them), two for a generator, so that one generator keeps
// its schedule at the default scenario's rate. A role left to its default
// gets fewer, at least one, where its nodes cannot give that many (see
// fitDefaults); one given by WithPodCPUs is kept, or refused if it does not fit.
var DefaultCPUs = map[string]int{RoleServer: 2, RoleGenerator: 2}

// DefaultMemoryMiB is each pod's memory when WithPodMemoryMiB gives none.
const DefaultMemoryMiB = 1024

// Driver runs plans as pods (see the package documentation). It
// implements harness.Driver, and its deployments harness.Attacker.
type Driver struct {
	c       *Client
	cfg     config
	engines *driver.EngineImages
	image   string
	logDir  string
	session string
	owner   string

	defaulted  map[string]bool // roles whose CPUs the options left to DefaultCPUs
	server     string          // the server pod's node
	genNodes   []string        // the generator pods' nodes, in turn
	placement  string          // why the pods land where they do
	mu         sync.Mutex
	runs       int
	ports      driver.PortCounter
	builtImage map[string]string // lbbench executable -> pushed image
	oneOff     int               // one-off pods made (runOnce)
}

var (
	_ harness.Driver     = (*Driver)(nil)
	_ harness.Deployment = (*deployment)(nil)

	_ topologies.EngineFinder = (*Driver)(nil)
	_ driver.Planner          = (*Driver)(nil)
	_ driver.Starting         = (*deployment)(nil)
)

// New returns a driver on c that runs lbbench's image (WithImage, or the
// image of exe pushed to WithImageRepo's repository) and writes each
// pod's logs under logDir. It first removes what lbbench processes that no
// longer run left in the namespace, and chooses the nodes.
func New(ctx context.Context, c *Client, exe, logDir string, opts ...Option) (*Driver, error) {
	cfg := config{Logf: func(string, ...any) {}, Generators: 1}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if err := driver.CheckGeneratorCount(cfg.Generators); err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	if cfg.Raw != "" {
		return nil, errors.New("kubernetes: --raw needs --driver local (the kubernetes driver's generators send histograms only)")
	}
	cpus, defaulted := map[string]int{}, map[string]bool{}
	for r, n := range DefaultCPUs {
		cpus[r], defaulted[r] = n, true
	}
	for r, n := range cfg.CPUs {
		defaulted[r] = false
		if _, ok := DefaultCPUs[r]; !ok {
			return nil, fmt.Errorf("kubernetes: CPUs for %q: the roles are server and generator", r)
		}
		if n < 1 {
			return nil, fmt.Errorf("kubernetes: CPUs for %s must be a whole number of at least 1 (Guaranteed QoS), got %d", r, n)
		}
		cpus[r] = n
	}
	cfg.CPUs = cpus
	if cfg.MemoryMiB <= 0 {
		cfg.MemoryMiB = DefaultMemoryMiB
	}
	d := &Driver{c: c, cfg: cfg, logDir: logDir, owner: ownerLabel(), builtImage: map[string]string{}, defaulted: defaulted}
	d.engines = driver.NewEngineImages("kubernetes", cfg.EngineImages, noEngineImage, d.resolveEngine)
	var b [4]byte
	rand.Read(b[:])
	d.session = hex.EncodeToString(b[:])
	if rep, err := c.Clean(ctx, driver.CleanFilter{}); err != nil {
		return nil, err
	} else if !rep.Empty() {
		cfg.Logf("removed %s left by lbbench processes that no longer run", rep)
	}
	switch {
	case cfg.Image != "":
		d.image = cfg.Image
	case cfg.ImageRepo != "":
		ref, err := d.push(exe)
		if err != nil {
			return nil, err
		}
		d.image = ref
	default:
		return nil, errors.New("kubernetes: the driver needs lbbench's image in the cluster: give --image-repo REGISTRY/NAME (it builds and pushes the image of this binary) or --image REF (made by lbbench image --archive and imported into every node's runtime)")
	}
	if err := d.place(ctx); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("kubernetes: log directory: %w", err)
	}
	return d, nil
}

// push builds the image of exe and pushes it to the configured repository.
func (d *Driver) push(exe string) (string, error) {
	if ref, ok := d.builtImage[exe]; ok {
		return ref, nil
	}
	img, err := BuildImage(exe, nil, d.cfg.ImageRepo, "")
	if err != nil {
		return "", err
	}
	if err := img.Push(); err != nil {
		return "", err
	}
	d.cfg.Logf("pushed %s", img.Ref)
	d.builtImage[exe] = img.Ref.String()
	return img.Ref.String(), nil
}

// place chooses the server's node and the generators': the generators
// go to other nodes than the server's, so that they never share its CPUs.
func (d *Driver) place(ctx context.Context) error {
	alloc, err := d.c.readyNodes(ctx)
	if err != nil {
		return err
	}
	ready := slices.Sorted(maps.Keys(alloc))
	if len(ready) == 0 {
		return errors.New("kubernetes: no node is ready")
	}
	d.server = ready[0]
	if d.cfg.ServerNode != "" {
		if !slices.Contains(ready, d.cfg.ServerNode) {
			return fmt.Errorf("kubernetes: server node %q is not a ready node (ready: %s)", d.cfg.ServerNode, strings.Join(ready, ", "))
		}
		d.server = d.cfg.ServerNode
	}
	for _, n := range ready {
		if n != d.server {
			d.genNodes = append(d.genNodes, n)
		}
	}
	switch {
	case len(d.genNodes) > 0:
		d.placement = fmt.Sprintf("server on %s; generators on %s, other nodes than the server's", d.server, strings.Join(d.genNodes, ", "))
	case d.cfg.ShareNode:
		d.genNodes = []string{d.server}
		d.placement = fmt.Sprintf("server and generators on %s, the only ready node (--kube-share-node): they share its CPUs", d.server)
	default:
		return fmt.Errorf("kubernetes: no other node: the generators must run on another node than the server's (%s), and it is the only ready node; add a node, or give --kube-share-node to let them share it", d.server)
	}
	d.fitDefaults(alloc)
	return d.fits(alloc)
}

// genCount is how many generator pods go to each generator node.
func (d *Driver) genCount() map[string]int {
	n := map[string]int{}
	for i := range d.cfg.Generators {
		n[d.genNodes[i%len(d.genNodes)]]++
	}
	return n
}

// fitDefaults lowers the CPUs of each role left to its default to what its
// nodes can give each of its pods (whole CPUs, at least one), when the
// server and the generators are on different nodes: a node of one CPU
// then runs pods of one, and says so. Sharing one node, or CPUs given
// explicitly, are left for fits to judge.
func (d *Driver) fitDefaults(alloc map[string]int64) {
	if slices.Contains(d.genNodes, d.server) {
		return
	}
	lower := func(role string, whole int64) {
		whole = max(whole, 1)
		if !d.defaulted[role] || whole >= int64(d.cfg.CPUs[role]) {
			return
		}
		d.cfg.Logf("%s pods get %s, what their nodes can give each (default %d; --pod-cpus %s=N sets it)", role, cpuCount(whole), d.cfg.CPUs[role], role)
		d.cfg.CPUs[role] = int(whole)
	}
	lower(RoleServer, alloc[d.server]/1000)
	per := int64(DefaultCPUs[RoleGenerator])
	for node, k := range d.genCount() {
		per = min(per, alloc[node]/1000/int64(k))
	}
	lower(RoleGenerator, per)
}

func cpuCount(n int64) string {
	if n == 1 {
		return "1 CPU"
	}
	return fmt.Sprintf("%d CPUs", n)
}

// fits refuses, before any pod is made, a placement whose pods need more
// CPUs than a node can give: the kubelet would reject them (OutOfcpu).
func (d *Driver) fits(alloc map[string]int64) error {
	need := map[string]int{d.server: d.cfg.CPUs[RoleServer]}
	for node, k := range d.genCount() {
		need[node] += k * d.cfg.CPUs[RoleGenerator]
	}
	for node, n := range need {
		if have := alloc[node]; int64(n)*1000 > have {
			return fmt.Errorf("kubernetes: node %s can give %s CPUs, but the pods placed on it need %d (--pod-cpus server=%d,generator=%d, %d generators): give fewer CPUs or generators, or add nodes",
				node, resource.NewMilliQuantity(have, resource.DecimalSI), n, d.cfg.CPUs[RoleServer], d.cfg.CPUs[RoleGenerator], d.cfg.Generators)
		}
	}
	return nil
}

// Session is the id shared by the names and labels of everything this
// driver creates.
func (d *Driver) Session() string { return d.session }

// Image is the lbbench image the pods run.
func (d *Driver) Image() string { return d.image }

// Placement says where the pods land and why.
func (d *Driver) Placement() string { return d.placement }

// Name implements harness.Driver.
func (d *Driver) Name() string { return "kubernetes" }

// Host implements topologies.Allocator: every process of a plan listens
// on the server pod's address (PodIPPlaceholder until it has one).
func (d *Driver) Host() string { return PodIPPlaceholder }

// Ports implements topologies.Allocator: every run has a pod, a network
// namespace, of its own, so any port of the driver kit's range is free
// (driver.PortCounter).
func (d *Driver) Ports(n int) (int, error) { return d.ports.Ports(n) }

// Describe implements harness.Driver: the cluster, image, session,
// placement and proxy engines' versions (FindEngine). It refuses what the
// pods cannot run: a command of this machine as the workers, a
// closed-loop or burst workload from several generators, an engine with
// no image.
func (d *Driver) Describe(ctx context.Context, s scenario.Scenario, e *results.Env) error {
	if d.cfg.Generators > 1 {
		if err := driver.OneGenerator(s); err != nil {
			return fmt.Errorf("kubernetes: %w (drop --generators)", err)
		}
	}
	var err error
	if e.Engines, err = driver.EngineVersions(ctx, s, d.FindEngine); err != nil {
		return err
	}
	e.Pinning = fmt.Sprintf("whole CPUs per pod (request = limit, Guaranteed): server %d, generator %d; %s", d.cfg.CPUs[RoleServer], d.cfg.CPUs[RoleGenerator], d.placement)
	e.Kubernetes = &results.KubernetesEnv{
		Server: d.c.Server, Version: d.c.Version, Namespace: d.c.Namespace,
		Session: d.session, Image: d.image, Generators: d.cfg.Generators, Placement: d.placement,
	}
	return nil
}

// Up implements harness.Driver: it renders r's plan and brings it up
// (driver.Up, UpPlan).
func (d *Driver) Up(ctx context.Context, r harness.Bring) (harness.Deployment, error) {
	return driver.Up(ctx, d, r)
}

// UpPlan brings p up as the server pod and the generator pods, in the
// image of the plan's lbbench binary (pushed first when it is another
// build's). On failure it deletes every pod it made.
func (d *Driver) UpPlan(ctx context.Context, p topologies.Plan) (harness.Deployment, error) {
	if err := driver.InImage(p); err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	image := d.image
	if exe := planExe(p); exe != "" {
		if d.cfg.ImageRepo == "" {
			return nil, fmt.Errorf("kubernetes: %s: a variant of another build needs its own image: give --image-repo so the driver can push it", p.ID)
		}
		var err error
		if image, err = d.push(exe); err != nil {
			return nil, err
		}
	}
	d.mu.Lock()
	d.runs++
	run := fmt.Sprintf("%03d", d.runs)
	d.mu.Unlock()
	return driver.Start(ctx, &deployment{d: d, plan: p, run: run, image: image, prefix: "lbbench-" + d.session + "-" + run})
}

// planExe is the lbbench binary of another build that p's processes run
// (topologies.RenderRun), or "" for the driver's own.
func planExe(p topologies.Plan) string {
	for _, proc := range p.Processes {
		if proc.Exe != "" {
			return proc.Exe
		}
	}
	return ""
}

// readyNodes returns the cluster's ready, schedulable nodes with the
// milli-CPUs each can give its pods (allocatable).
func (c *Client) readyNodes(ctx context.Context) (map[string]int64, error) {
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: list nodes: %w", err)
	}
	ready := map[string]int64{}
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			continue
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready[n.Name] = n.Status.Allocatable.Cpu().MilliValue()
			}
		}
	}
	return ready, nil
}

// ReadyNodes lists the names of the cluster's ready, schedulable nodes,
// sorted.
func (c *Client) ReadyNodes(ctx context.Context) ([]string, error) {
	ready, err := c.readyNodes(ctx)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(ready)), nil
}

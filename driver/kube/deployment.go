package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/guard"
	"github.com/lbbench/lbbench/internal/logtail"
	"github.com/lbbench/lbbench/internal/safepath"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// podStartTimeout bounds the wait for a run's pods to run: the image is on
// the nodes or in a registry the nodes reach.
const podStartTimeout = 2 * time.Minute

// tmpVolume is the pod's shared /tmp.
const tmpVolume = "tmp"

// pollEvery is how often the driver reads a pod's state while it waits
// for it to start or go: a GET, between runs only.
const pollEvery = 100 * time.Millisecond

// goneTimeout bounds the wait, in Down, for the pods to leave the API.
const goneTimeout = time.Minute

type deployment struct {
	d      *Driver
	plan   topologies.Plan
	run    string
	image  string
	prefix string // lbbench-<session>-<run>

	server string   // the server pod's name
	gens   []string // the generator pods' names
	ip     string   // the server pod's address
	pods   []results.Pod

	downOnce sync.Once
	downErr  error
}

func (dep *deployment) labels(role string) map[string]string {
	l := driver.Labels(dep.d.session, dep.d.owner, role)
	l[driver.LabelRun] = dep.run
	return l
}

// resources is a pod's whole CPUs and memory, request = limit: the
// Guaranteed QoS class. They are the pod's (pod-level resources), shared
// by its containers: the workers and the proxy draw on one budget, as
// they would on a server of that size.
func (dep *deployment) resources(role string) *corev1.ResourceRequirements {
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(dep.d.cfg.CPUs[role]), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(dep.d.cfg.MemoryMiB<<20, resource.BinarySI),
	}
	return &corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
}

// container is one of the run's containers: lbbench's image with args,
// unprivileged, read-only, told its pod's address.
func (dep *deployment) container(name string, args []string) corev1.Container {
	return corev1.Container{
		Name: name, Image: dep.image, Args: args,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Env: []corev1.EnvVar{{Name: PodIPEnv, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"},
		}}},
		VolumeMounts:             []corev1.VolumeMount{{Name: tmpVolume, MountPath: "/tmp"}},
		SecurityContext:          restricted(),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// restricted is every container's security context: no privilege, a
// read-only root, no capabilities, not root.
func restricted() *corev1.SecurityContext {
	no, yes := false, true
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes, RunAsNonRoot: &yes,
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// podSpec is what every pod the driver makes shares: placed on node by
// the driver itself (it must say where pods are and why, see place, and a
// cluster may have no scheduler), never restarted, with no service
// account token or service links, user 65534, tolerating every taint.
func podSpec(node string, grace int64, cs []corev1.Container) corev1.PodSpec {
	no := false
	uid := int64(65534)
	return corev1.PodSpec{
		NodeName:                      node,
		RestartPolicy:                 corev1.RestartPolicyNever,
		AutomountServiceAccountToken:  &no,
		EnableServiceLinks:            &no,
		TerminationGracePeriodSeconds: &grace,
		SecurityContext:               &corev1.PodSecurityContext{RunAsUser: &uid, RunAsGroup: &uid},
		Containers:                    cs,
		Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
	}
}

// emptyDir is a pod volume of at most 256 MiB.
func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: resource.NewQuantity(256<<20, resource.BinarySI)}}}
}

// pod is one of the run's pods on node, with role's resources and one
// /tmp for its containers, where the unix topologies' sockets live, as
// the docker driver's tmpfs volume is.
func (dep *deployment) pod(name, role, node string, grace int64, cs []corev1.Container) *corev1.Pod {
	spec := podSpec(node, grace, cs)
	spec.Resources = dep.resources(role)
	spec.Volumes = []corev1.Volume{emptyDir(tmpVolume)}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: dep.labels(role), Annotations: map[string]string{AnnotationPlan: dep.plan.ID}},
		Spec:       spec,
	}
}

// containerName is the name of process i's container in the server pod.
func containerName(p topologies.Process, i int) string { return p.Role + "-" + strconv.Itoa(i) }

// Volumes of an engine process i: its working directory, and lbbench's
// copy (one for the pod).
func workVolume(i int) string { return "work-" + strconv.Itoa(i) }

const binVolume = "lbbench-bin"

// engine returns the containers and the working volume of engine process i (nginx
// or HAProxy): an init container of lbbench's image that stages the
// configuration and lbbench's binary (see Stage), one of the engine's
// image that checks the configuration when the engine has a check (nginx
// -t), and the engine's container, lbbench guard around the engine, in
// its working directory. The pod's binVolume is up's.
func (dep *deployment) engine(i int, p topologies.Process) (corev1.Container, []corev1.Container, corev1.Volume, error) {
	e := p.Engine
	ref, err := dep.d.engines.Image(e.Engine)
	if err != nil {
		return corev1.Container{}, nil, corev1.Volume{}, err
	}
	subst := driver.Subst(EngineWorkDir)
	substAll := func(args []string) []string { return podArgs(driver.SubstAll(subst, args)) }
	files := make([]topologies.File, len(p.Files))
	for j, f := range p.Files {
		files[j] = topologies.File{Name: f.Name, Content: subst(f.Content)}
	}
	encoded, err := EncodeStage(files)
	if err != nil {
		return corev1.Container{}, nil, corev1.Volume{}, err
	}
	work := corev1.VolumeMount{Name: workVolume(i), MountPath: EngineWorkDir}
	bin := corev1.VolumeMount{Name: binVolume, MountPath: path.Dir(StagedBinary)}
	stage := dep.container("stage-"+strconv.Itoa(i), []string{StageSubcommand, "--" + FlagStageDir, EngineWorkDir, "--" + FlagStageBinary, StagedBinary})
	stage.Env = append(stage.Env, corev1.EnvVar{Name: StageEnv, Value: encoded})
	stage.VolumeMounts = append(stage.VolumeMounts, work, bin)
	inits := []corev1.Container{stage}
	engineC := func(name string, command, args []string) corev1.Container {
		c := dep.container(name, args)
		c.Image, c.Command, c.WorkingDir = ref, command, EngineWorkDir
		c.VolumeMounts = append(c.VolumeMounts, work)
		return c
	}
	if len(e.Check) > 0 {
		inits = append(inits, engineC("check-"+strconv.Itoa(i), []string{e.Path}, substAll(e.Check)))
	}
	c := engineC(containerName(p, i), append([]string{StagedBinary}, guard.Args(e.Path)...), substAll(e.Args))
	bin.ReadOnly = true
	c.VolumeMounts = append(c.VolumeMounts, bin)
	return c, inits, emptyDir(workVolume(i)), nil
}

// podArgs puts the pod address variable in place of the placeholder: the
// kubelet expands $(LBBENCH_POD_IP) in a container's arguments.
func podArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, PodIPPlaceholder, "$("+PodIPEnv+")")
	}
	return out
}

// serverPod is the run's server pod: a container per process of the
// plan, and each engine's init containers and volumes (see engine).
func (dep *deployment) serverPod() (*corev1.Pod, error) {
	var cs, inits []corev1.Container
	var vols []corev1.Volume
	for i, p := range dep.plan.Processes {
		if p.Engine == nil {
			if len(p.Files) > 0 {
				return nil, fmt.Errorf("kubernetes: %s: process %s needs files, which this driver writes for proxy engines only", dep.plan.ID, p.Role)
			}
			cs = append(cs, dep.container(containerName(p, i), podArgs(p.Args())))
			continue
		}
		c, init, v, err := dep.engine(i, p)
		if err != nil {
			return nil, err
		}
		cs, inits, vols = append(cs, c), append(inits, init...), append(vols, v)
	}
	if len(inits) > 0 {
		vols = append(vols, emptyDir(binVolume))
	}
	dep.server = dep.prefix + "-" + RoleServer
	server := dep.pod(dep.server, RoleServer, dep.d.server, int64(StopTimeout/time.Second), cs)
	server.Spec.InitContainers = inits
	server.Spec.Volumes = append(server.Spec.Volumes, vols...)
	return server, nil
}

// Start implements driver.Starting: the server pod and the generator
// pods, each running and ready.
func (dep *deployment) Start(ctx context.Context) error {
	api := dep.d.c.cs.CoreV1().Pods(dep.d.c.Namespace)
	server, err := dep.serverPod()
	if err != nil {
		return err
	}
	var pods []*corev1.Pod
	pods = append(pods, server)
	for i := range dep.d.cfg.Generators {
		name := dep.prefix + "-" + RoleGenerator + "-" + strconv.Itoa(i)
		node := dep.d.genNodes[i%len(dep.d.genNodes)]
		pods = append(pods, dep.pod(name, RoleGenerator, node, 0, []corev1.Container{dep.container(RoleGenerator, []string{"idle"})}))
		dep.gens = append(dep.gens, name)
	}
	for _, p := range pods {
		if _, err := api.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("kubernetes: %s: create pod %s: %w", dep.plan.ID, p.Name, err)
		}
	}
	for _, p := range pods {
		got, err := dep.waitRunning(ctx, p)
		if err != nil {
			return err
		}
		var names []string
		for _, c := range got.Spec.Containers {
			names = append(names, c.Name)
		}
		r := got.Spec.Resources
		dep.pods = append(dep.pods, results.Pod{
			Name: got.Name, Containers: names, Role: got.Labels[driver.LabelRole], Node: got.Spec.NodeName, IP: got.Status.PodIP,
			CPURequest: r.Requests.Cpu().String(), CPULimit: r.Limits.Cpu().String(),
			MemoryLimit: r.Limits.Memory().String(), QOS: string(got.Status.QOSClass),
		})
		if p.Name == dep.server {
			dep.ip = got.Status.PodIP
		}
	}
	if dep.ip == "" {
		return fmt.Errorf("kubernetes: %s: the server pod has no address", dep.plan.ID)
	}
	// Each process is probed from the first generator pod, across the
	// cluster's network as the load goes; all at once (see eachProcess).
	errs := make([]error, len(dep.plan.Processes))
	dep.eachProcess(func(i int, p topologies.Process) { errs[i] = dep.waitReady(ctx, i, p) })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// eachProcess calls f for every process of the plan at once and waits for
// them. Probes and counters are read by exec in a pod, each a round trip
// through the API server and a kubelet: at once, a run's counters came in
// 68 to 191 ms on the test cluster (10 runs), so they are read close to
// the load's end. (A run's bring-up is mostly its pods' start, 0.7 to 3.1 s.)
func (dep *deployment) eachProcess(f func(i int, p topologies.Process)) {
	var wg sync.WaitGroup
	for i, p := range dep.plan.Processes {
		wg.Go(func() { f(i, p) })
	}
	wg.Wait()
}

// waitRunning waits until pod want (created) runs with all its containers
// started, and returns it. A container that ended, or a pod that failed,
// is an error with its log's tail; but a pod its node's kubelet refused
// for want of room (rejected) is made again, within podStartTimeout.
func (dep *deployment) waitRunning(ctx context.Context, want *corev1.Pod) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, podStartTimeout)
	defer cancel()
	api := dep.d.c.cs.CoreV1().Pods(dep.d.c.Namespace)
	name := want.Name
	last := "not created yet"
	for {
		p, err := api.Get(ctx, name, getOpts)
		if err == nil && rejected(p) {
			last = fmt.Sprintf("refused by node %s (%s: %s), made again", p.Spec.NodeName, p.Status.Reason, p.Status.Message)
			if err := dep.recreate(ctx, want); err != nil {
				return nil, fmt.Errorf("kubernetes: %s: pod %s: %s: %w", dep.plan.ID, name, last, err)
			}
		} else if err == nil {
			if f, dead := dep.podFailure(ctx, p); dead {
				return nil, fmt.Errorf("kubernetes: %s: %s: %s%s", dep.plan.ID, f.Process, f.Exit, logtail.Format("its log", f.LogTail))
			}
			started := p.Status.Phase == corev1.PodRunning
			for _, s := range p.Status.ContainerStatuses {
				started = started && s.State.Running != nil
				if w := s.State.Waiting; w != nil {
					last = fmt.Sprintf("container %s waiting: %s %s", s.Name, w.Reason, w.Message)
				}
			}
			if started && len(p.Status.ContainerStatuses) == len(p.Spec.Containers) {
				return p, nil
			}
			if len(p.Status.ContainerStatuses) == 0 {
				last = fmt.Sprintf("phase %s", p.Status.Phase)
				for _, c := range p.Status.Conditions {
					if c.Status != corev1.ConditionTrue && c.Message != "" {
						last += "; " + c.Message
					}
				}
			}
		} else if ctx.Err() == nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return nil, fmt.Errorf("kubernetes: %s: pod %s not running after %s: %s", dep.plan.ID, name, podStartTimeout, last)
			}
			return nil, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

// rejected reports whether p's kubelet refused it at admission for want
// of CPU, memory or pod slots (reasons OutOfcpu, OutOfmemory, OutOfpods)
// before any container of it started. lbbench only asks a node for what
// it can give (Driver.Describe checks), so such a refusal means the node
// still counts a pod that is going: one deleted at once by a run that
// just ended, whose containers are still stopping. Made again a moment
// later, the pod is admitted.
func rejected(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && strings.HasPrefix(p.Status.Reason, "OutOf") &&
		len(p.Status.ContainerStatuses) == 0 && len(p.Status.InitContainerStatuses) == 0
}

// recreate deletes the refused pod and creates want again once it is gone.
func (dep *deployment) recreate(ctx context.Context, want *corev1.Pod) error {
	api := dep.d.c.cs.CoreV1().Pods(dep.d.c.Namespace)
	zero := int64(0)
	if err := api.Delete(ctx, want.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	for {
		if _, err := api.Get(ctx, want.Name, getOpts); apierrors.IsNotFound(err) {
			break
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollEvery):
		}
	}
	again := want.DeepCopy()
	again.ResourceVersion, again.UID = "", ""
	_, err := api.Create(ctx, again, metav1.CreateOptions{})
	return err
}

// podFailure reports the first container of p that ended, or p's failure.
func (dep *deployment) podFailure(ctx context.Context, p *corev1.Pod) (results.Failure, bool) {
	for _, s := range p.Status.InitContainerStatuses {
		t := s.State.Terminated
		if t == nil || t.ExitCode == 0 {
			continue
		}
		what := "staging of its files"
		if strings.HasPrefix(s.Name, "check-") {
			what = "configuration check"
		}
		f := results.Failure{
			Process: fmt.Sprintf("proxy (init container %s of pod %s)", s.Name, p.Name),
			Exit:    fmt.Sprintf("%s failed: exit status %d", what, t.ExitCode),
			LogTail: dep.logLines(ctx, p.Name, s.Name),
		}
		return f, true
	}
	for _, s := range p.Status.ContainerStatuses {
		t := s.State.Terminated
		if t == nil {
			continue
		}
		exit := fmt.Sprintf("exit status %d", t.ExitCode)
		if t.Reason != "" {
			exit += " (" + t.Reason + ")"
		}
		f := results.Failure{Process: fmt.Sprintf("%s (container %s of pod %s)", strings.SplitN(s.Name, "-", 2)[0], s.Name, p.Name), Exit: exit}
		f.LogTail = dep.logLines(ctx, p.Name, s.Name)
		return driver.NameDeadWorker(f, strings.SplitN(s.Name, "-", 2)[0]), true
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return results.Failure{Process: "pod " + p.Name, Exit: fmt.Sprintf("phase %s: %s %s", p.Status.Phase, p.Status.Reason, p.Status.Message)}, true
	}
	return results.Failure{}, false
}

// logLines returns the last lines of a container's log.
func (dep *deployment) logLines(ctx context.Context, pod, container string) []string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	tail := int64(15)
	b, err := dep.d.c.cs.CoreV1().Pods(dep.d.c.Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: &tail}).DoRaw(ctx)
	if err != nil {
		return nil
	}
	return logtail.Lines(string(b), 15)
}

// url puts the server pod's address in a plan URL.
func (dep *deployment) url(u string) string { return strings.ReplaceAll(u, PodIPPlaceholder, dep.ip) }

// probe runs "lbbench probe" in the first generator pod.
func (dep *deployment) probe(ctx context.Context, c driver.ProbeCommand, stdout, stderr io.Writer) (int, error) {
	return dep.d.c.Exec(ctx, dep.gens[0], RoleGenerator, append([]string{driver.ImageBinary}, c.Args()...), nil, stdout, stderr)
}

// waitReady probes process i's health URL until it answers 200.
func (dep *deployment) waitReady(ctx context.Context, i int, p topologies.Process) error {
	var out bytes.Buffer
	code, err := dep.probe(ctx, driver.ProbeCommand{URL: dep.url(p.Health), Timeout: ReadyTimeout}, &out, &out)
	if err == nil && code == 0 {
		return nil
	}
	msg := strings.TrimSpace(out.String())
	if err != nil {
		msg = err.Error()
	}
	container := containerName(p, i)
	return fmt.Errorf("kubernetes: %s: %s did not become ready: %s%s", dep.plan.ID, container, msg,
		logtail.Format(container+" output", dep.logLines(ctx, dep.server, container)))
}

func (dep *deployment) Entry() string { return dep.url(dep.plan.Entry) }

// Pods is where the run's pods ran, with their resources.
func (dep *deployment) Pods() []results.Pod { return dep.pods }

// Stats fetches every process's counters from the first generator pod. A
// container that ended is listed in Dead with its log's tail.
func (dep *deployment) Stats(ctx context.Context) (harness.Stats, error) {
	var st harness.Stats
	p, err := dep.d.c.cs.CoreV1().Pods(dep.d.c.Namespace).Get(ctx, dep.server, getOpts)
	if err != nil {
		return st, fmt.Errorf("kubernetes: %s: %w", dep.plan.ID, err)
	}
	if f, dead := dep.podFailure(ctx, p); dead {
		st.Dead = append(st.Dead, f)
		return st, nil
	}
	// Every process's answers are fetched at once (eachProcess), then
	// added to st in the plan's order.
	type fetched struct {
		what   string
		err    error
		decode func(*harness.Stats) error
	}
	answers := make([][]fetched, len(dep.plan.Processes))
	dep.eachProcess(func(i int, proc topologies.Process) {
		if e := proc.Engine; e != nil {
			// nginx and HAProxy do not report their own CPU, and
			// HAProxy's counters are on a socket in its container: lbbench's
			// copy there reads both.
			sock := ""
			if proc.StatsKind == topologies.StatsHAProxy {
				sock = driver.Subst(EngineWorkDir)(proc.Stats)
			}
			var out, errOut bytes.Buffer
			code, err := dep.d.c.Exec(ctx, dep.server, containerName(proc, i), append([]string{StagedBinary}, driver.EngineStatsArgs(sock)...), nil, &out, &errOut)
			if err == nil && code != 0 {
				err = fmt.Errorf("exit status %d: %s", code, strings.TrimSpace(errOut.String()))
			}
			answers[i] = append(answers[i], fetched{e.Engine, err, func(st *harness.Stats) error { return driver.DecodeEngineReport(e.Engine, out.Bytes(), st) }})
			if sock != "" {
				return
			}
		}
		if proc.Stats == "" {
			return
		}
		var out, errOut bytes.Buffer
		code, err := dep.probe(ctx, driver.ProbeCommand{URL: dep.url(proc.Stats), Get: true, Timeout: driver.StatsTimeout}, &out, &errOut)
		if err == nil && code != 0 {
			err = errors.New(strings.TrimSpace(errOut.String()))
		}
		answers[i] = append(answers[i], fetched{proc.Role, err, func(st *harness.Stats) error { return driver.DecodeStats(proc.StatsKind, out.Bytes(), st) }})
	})
	var errs []error
	for _, f := range slices.Concat(answers...) {
		err := f.err
		if err == nil {
			err = f.decode(&st)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("kubernetes: %s: stats of %s: %w", dep.plan.ID, f.what, err))
		}
	}
	return st, errors.Join(errs...)
}

// Attack implements harness.Attacker: one "lbbench attack" in each
// generator pod, with its share of spec's load; each gets its spec on
// standard input and answers its measurement on standard output (no
// volume is shared with the pods). Their histograms are merged.
func (dep *deployment) Attack(ctx context.Context, spec workloads.Spec) (*results.Measurement, error) {
	dir, err := safepath.Join(dep.d.logDir, dep.plan.ID+"-"+RoleGenerator)
	if err != nil {
		return nil, err
	}
	g := loadgen.Generators{
		K:       len(dep.gens),
		Entry:   dep.Entry(),
		HostDir: dir,
		Live:    dep.d.cfg.Live,
		Remote: func(ctx context.Context, i int, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
			code, err := dep.d.c.Exec(ctx, dep.gens[i], RoleGenerator, append([]string{driver.ImageBinary}, args...), stdin, stdout, stderr)
			if err == nil && code != 0 {
				err = fmt.Errorf("exit status %d", code)
			}
			return err
		},
	}
	m, err := g.Run(ctx, spec)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("kubernetes: %s: %w", dep.plan.ID, err)
	}
	return m, err
}

// Down saves every container's log, deletes the run's pods (the server's
// with its grace period: the workers drain; the generators' at once) and
// waits until they are gone from the API. It is idempotent. When ctx ends
// (a hard stop) it deletes what is left at once.
func (dep *deployment) Down(ctx context.Context) error {
	dep.downOnce.Do(func() {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), goneTimeout+StopTimeout)
		defer cancel()
		api := dep.d.c.cs.CoreV1().Pods(dep.d.c.Namespace)
		var errs []error
		sel := metav1.ListOptions{LabelSelector: driver.LabelSession + "=" + dep.d.session + "," + driver.LabelRun + "=" + dep.run}
		list, err := api.List(cleanup, sel)
		if err != nil {
			dep.downErr = fmt.Errorf("kubernetes: %s: down: list pods: %w", dep.plan.ID, err)
			return
		}
		for _, p := range list.Items {
			dep.saveLogs(cleanup, &p)
			grace := int64(0)
			if p.Name == dep.server && ctx.Err() == nil {
				grace = int64(StopTimeout / time.Second)
			}
			if err := api.Delete(cleanup, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete %s: %w", p.Name, err))
			}
		}
		// Wait until the kubelets have stopped them; on a hard stop, or
		// when the grace period is over, delete at once.
		forced := false
		for {
			left, err := api.List(cleanup, sel)
			if err != nil {
				errs = append(errs, err)
				break
			}
			if len(left.Items) == 0 {
				break
			}
			if (ctx.Err() != nil || cleanup.Err() != nil) && !forced {
				forced = true
				zero := int64(0)
				for _, p := range left.Items {
					api.Delete(context.WithoutCancel(ctx), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
				}
			}
			if cleanup.Err() != nil {
				names := make([]string, 0, len(left.Items))
				for _, p := range left.Items {
					names = append(names, p.Name)
				}
				errs = append(errs, fmt.Errorf("pods still there after %s: %s", goneTimeout+StopTimeout, strings.Join(names, ", ")))
				break
			}
			time.Sleep(pollEvery)
		}
		if err := errors.Join(errs...); err != nil {
			dep.downErr = fmt.Errorf("kubernetes: %s: down: %w", dep.plan.ID, err)
		}
	})
	return dep.downErr
}

// saveLogs writes each container's log of p under the log directory.
func (dep *deployment) saveLogs(ctx context.Context, p *corev1.Pod) {
	// The init containers (an engine's staging and check) too: their
	// logs say why an engine did not start.
	for _, c := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
		b, err := dep.d.c.cs.CoreV1().Pods(dep.d.c.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, Timestamps: true}).DoRaw(ctx)
		if err != nil {
			continue
		}
		role := p.Labels[driver.LabelRole]
		name := dep.plan.ID + "-" + role + ".log"
		if role == RoleServer {
			name = dep.plan.ID + "-" + c.Name + ".log"
		} else if role == RoleGenerator {
			name = dep.plan.ID + "-" + strings.TrimPrefix(p.Name, dep.prefix+"-") + ".log"
		}
		if path, err := safepath.Join(dep.d.logDir, name); err == nil {
			os.WriteFile(filepath.Clean(path), b, 0o644)
		}
	}
}

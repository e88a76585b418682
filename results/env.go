package results

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/unix"
)

// Env describes where results were produced.
type Env struct {
	Hostname  string `json:"hostname"`
	Kernel    string `json:"kernel"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUModel  string `json:"cpu_model"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	// Version and Commit identify the lbbench that ran.
	Version string `json:"version"`
	Commit  string `json:"commit"`
	// Driver is "local", "docker" or "kubernetes".
	Driver string `json:"driver"`
	// Pinning says how generator and targets were placed on CPUs.
	Pinning string `json:"pinning"`
	// Engines maps each proxy engine the scenario runs (nginx, haproxy) to
	// its version line; empty when only the built-in proxy runs.
	Engines map[string]string `json:"engines,omitempty"`
	// Containers describes the docker driver's testbed; nil for local
	// processes.
	Containers *ContainerEnv `json:"containers,omitempty"`
	// Kubernetes describes the kubernetes driver's cluster; nil for the
	// other drivers.
	Kubernetes *KubernetesEnv `json:"kubernetes,omitempty"`
}

// ContainerEnv is the docker driver's part of the environment.
type ContainerEnv struct {
	// Engine and API are the Docker Engine's version and the API version
	// spoken.
	Engine string `json:"engine"`
	API    string `json:"api"`
	// Session is the id in the names and labels of everything the run
	// created (lbbench clean --session).
	Session string `json:"session"`
	// Image is the lbbench image the runs used (lbbench:<content hash>).
	Image string `json:"image"`
	// Network describes the per-run network, for example "internal
	// bridge, one per run".
	Network string `json:"network"`
	// Generator says where the load came from.
	Generator string `json:"generator"`
	// Placement gives each role's CPUs: a cpuset or a CPU limit.
	Placement []ContainerPlacement `json:"placement"`
}

// ContainerPlacement is one role's CPU placement.
type ContainerPlacement struct {
	Role string `json:"role"`
	// Cpuset is the CPUs the role's containers may use ("" for any).
	Cpuset string `json:"cpuset,omitempty"`
	// CPULimit is each container's CPU quota in CPUs (0 for none).
	CPULimit float64 `json:"cpu_limit,omitempty"`
}

// CaptureEnv reads the machine's description. version and commit identify
// lbbench; an empty commit is taken from the binary's build information.
func CaptureEnv(driver, version, commit string) Env {
	e := Env{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		CPUs:      runtime.NumCPU(),
		GoVersion: runtime.Version(),
		Version:   version,
		Commit:    commit,
		Driver:    driver,
		Pinning:   "none",
		CPUModel:  cpuModel(),
	}
	e.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		e.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	if e.Commit == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					e.Commit = s.Value
				}
			}
		}
	}
	return e
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Progress reports a scenario's advance, measured or simulated
// (harness.Run), to the caller: once when a run starts and once when it
// is done.
type Progress struct {
	// Index is the run's position (from 1) out of Total.
	Index, Total int
	// Run is set when a run finished (Done), nil when it is starting.
	Run  *Run
	Done bool
	// ID, Variant and Rep name the run.
	ID      string
	Variant string
	Rep     int
}

// KubernetesEnv is the kubernetes driver's part of the environment.
type KubernetesEnv struct {
	// Server is the API server's address and Version its version.
	Server  string `json:"server"`
	Version string `json:"version"`
	// Namespace holds the run's pods.
	Namespace string `json:"namespace"`
	// Session is the id in the names and labels of everything the run
	// created (lbbench clean --driver kubernetes --session).
	Session string `json:"session"`
	// Image is the lbbench image the pods ran.
	Image string `json:"image"`
	// Generators is the number of generator pods per run.
	Generators int `json:"generators"`
	// Placement says where the pods land and why.
	Placement string `json:"placement"`
}

// Roles of a cluster run's pods (Pod.Role).
const (
	PodServer    = "server"
	PodGenerator = "generator"
)

// Pod is one of a run's pods on a cluster: where it ran and with what
// resources.
type Pod struct {
	Name string `json:"name"`
	// Containers are its containers' names (workers-0, proxy-1, ...).
	Containers []string `json:"containers"`
	// Role is PodServer or PodGenerator.
	Role string `json:"role"`
	Node string `json:"node"`
	IP   string `json:"ip"`
	// CPURequest and CPULimit are the pod's CPU request and limit (equal:
	// whole CPUs, shared by its containers), MemoryLimit its memory limit,
	// QOS its quality of service class.
	CPURequest  string `json:"cpu_request"`
	CPULimit    string `json:"cpu_limit"`
	MemoryLimit string `json:"memory_limit"`
	QOS         string `json:"qos"`
}

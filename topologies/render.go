package topologies

import (
	"fmt"
	"strconv"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/targets/worker"
)

// renderer renders one topology. Each topology registers one in its own
// file, so adding a topology touches no other.
type renderer func(v scenario.Variant, w scenario.Workers, a *alloc) (Plan, error)

var renderers = map[string]renderer{}

// Render turns variant v with workers w into a plan, taking addresses from
// a. v and w must have been through WithDefaults and Validate.
func Render(v scenario.Variant, w scenario.Workers, a Allocator) (Plan, error) {
	r, ok := renderers[v.Topology]
	if !ok {
		return Plan{}, fmt.Errorf("topologies: unknown topology %q (known: %v)", v.Topology, Names())
	}
	if v.AcceptWhen != "" {
		w.AcceptWhen = v.AcceptWhen
	}
	if v.Target != nil {
		w.Target = v.Target
		if w.AcceptWhen == scenario.AcceptIdle && v.AcceptWhen == "" {
			// The workers' setting is for the built-in worker.
			w.AcceptWhen = ""
		}
		if len(w.Slow) > 0 {
			return Plan{}, fmt.Errorf("topologies: %s: workers.slow needs the built-in worker, not the variant's target", v.Name)
		}
	}
	if w.Target != nil && w.AcceptWhen == scenario.AcceptIdle {
		return Plan{}, fmt.Errorf("topologies: %s: accept_when idle needs the built-in worker, not workers.target", v.Name)
	}
	p, err := r(v, w, &alloc{a: a, variant: v.Name})
	if err != nil {
		return Plan{}, err
	}
	if err := injectCosts(p, v); err != nil {
		return Plan{}, err
	}
	p.Variant, p.Topology = v.Name, v.Topology
	return p, nil
}

// injectCosts gives the built-in proxy of p v's ProxyCost and the built-in
// workers its WorkerCost ("lbbench proxy --inject-cost", "lbbench serve
// --inject-cost"); a cost with nobody to spend it is an error.
func injectCosts(p Plan, v scenario.Variant) error {
	proxy, workers := false, false
	for _, proc := range p.Processes {
		switch {
		case proc.Proxy != nil && v.ProxyCost != 0:
			proc.Proxy.InjectCost, proxy = v.ProxyCost, true
		case proc.Serve != nil && proc.Serve.Exec == nil && v.WorkerCost != 0:
			proc.Serve.Worker.InjectCost, workers = v.WorkerCost, true
		}
	}
	if v.ProxyCost != 0 && !proxy {
		return fmt.Errorf("topologies: %s: an injected proxy cost needs the built-in proxy, which topology %s does not run here", v.Name, v.Topology)
	}
	if v.WorkerCost != 0 && !workers {
		return fmt.Errorf("topologies: %s: an injected worker cost needs the built-in worker, not a foreign target", v.Name)
	}
	return nil
}

// alloc wraps an Allocator with the helpers renderers share.
type alloc struct {
	a       Allocator
	variant string
}

// ports returns the first of n consecutive free ports.
func (a *alloc) ports(n int) (int, error) {
	p, err := a.a.Ports(n)
	if err != nil {
		return 0, fmt.Errorf("topologies: %s: allocate %d ports: %w", a.variant, n, err)
	}
	return p, nil
}

// addr returns a new free "host:port".
func (a *alloc) addr() (string, error) {
	p, err := a.ports(1)
	if err != nil {
		return "", err
	}
	return a.hostPort(p), nil
}

func (a *alloc) hostPort(p int) string { return a.a.Host() + ":" + strconv.Itoa(p) }

// portWorkers is what a proxy in front of workers on ports of their own
// needs: worker i listens on base+i.
type portWorkers struct {
	base                   int
	wadmin, listen, padmin string // workers' admin, proxy listen, proxy admin
}

// portWorkers allocates, in this order, n consecutive worker ports, the
// workers' admin address and the proxy's listen and admin addresses.
func (a *alloc) portWorkers(n int) (portWorkers, error) {
	base, err := a.ports(n)
	if err != nil {
		return portWorkers{}, err
	}
	var addrs [3]string
	for i := range addrs {
		if addrs[i], err = a.addr(); err != nil {
			return portWorkers{}, err
		}
	}
	return portWorkers{base: base, wadmin: addrs[0], listen: addrs[1], padmin: addrs[2]}, nil
}

// upstreams returns the "host:port" of each of the n workers from base.
func (a *alloc) upstreams(base, n int) []string {
	ups := make([]string, n)
	for i := range ups {
		ups[i] = a.hostPort(base + i)
	}
	return ups
}

// serve is the "lbbench serve" process running w with the given listen
// mode on host:port, with its admin API on admin.
func serve(w scenario.Workers, listen prefork.ListenMode, host string, port int, admin string) Process {
	c := &prefork.ServeConfig{
		Config: prefork.Config{
			Workers: w.Count,
			Listen:  listen,
			Host:    host,
			Port:    port,
			Worker:  worker.Config{Concurrency: w.Concurrency, Mode: w.Mode, AcceptWhen: w.AcceptWhen},
			Exec:    targetExec(w),
		},
		Admin: admin,
	}
	for _, s := range w.Slow {
		if c.Slowdown == nil {
			c.Slowdown = map[int]float64{}
		}
		c.Slowdown[s.Index] = s.Factor
	}
	return Process{
		Role:      RoleWorkers,
		Serve:     c,
		Health:    "http://" + admin + "/healthz",
		Stats:     "http://" + admin + "/stats",
		StatsKind: StatsWorkers,
	}
}

// RenderRun renders variant v for the run id: Render's plan, with its ID
// set and, when exe is not empty (a variant of another build), exe in place
// of the lbbench binary; other executables (nginx, HAProxy) stay.
func RenderRun(id string, v scenario.Variant, w scenario.Workers, a Allocator, exe string) (Plan, error) {
	p, err := Render(v, w, a)
	if err != nil {
		return p, err
	}
	p.ID = id
	if exe != "" {
		for i := range p.Processes {
			if p.Processes[i].Exe == "" {
				p.Processes[i].Exe = exe
			}
		}
	}
	return p, nil
}

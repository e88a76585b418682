package prefork

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/lbbench/lbbench/internal/proccpu"
	"github.com/lbbench/lbbench/targets/worker"
)

const adminTimeout = 5 * time.Second // for a request to Handler

// States of a worker in WorkerStatus.
const (
	// StateRunning: the worker's process runs.
	StateRunning = "running"
	// StateRestarting: the process failed and is about to be started again.
	StateRestarting = "restarting"
	// StateExited: the process exited and will not be started again.
	StateExited = "exited"
)

// StatsReport is the JSON body of /stats on the Handler.
type StatsReport struct {
	// Workers holds each child process's worker stats, in index order. A
	// child that did not answer has only its Index (and PID) set; an Exec
	// instance has only Index and PID, since a foreign server keeps no
	// lbbench counters.
	Workers []worker.Stats `json:"workers"`
	// Status is the supervisor's view of each child process, in index
	// order.
	Status []WorkerStatus `json:"status"`
	// Errors names each child that did not answer, and why; /stats answers
	// 503 when there are any.
	Errors []string `json:"errors,omitempty"`
	// Foreign counts listening sockets on the reuseport port that are not
	// the workers' (Supervisor.Foreign): another process sharing their
	// connections.
	Foreign int `json:"foreign_listeners,omitempty"`
	// Port is the reuseport group's port, when Foreign is set.
	Port int `json:"port,omitempty"`
	// Steal is the host's steal time so far (since boot), by CPU, on
	// every CPU the supervisor may run on (/proc/stat over its affinity,
	// which its workers inherit: a driver's pinning, a container's cpuset,
	// the CPUs a pod's node gives it): time those CPUs had work and the
	// hypervisor ran something else. A driver reads it before and after a
	// run and keeps the difference (results.Server). Where the supervisor
	// runs on another host than the generator (a cluster's node), it is
	// that host's. Absent where /proc/stat cannot be read.
	Steal map[int]time.Duration `json:"steal_ns,omitempty"`
}

// WorkerStatus is the supervisor's view of one child process: a worker, or
// an Exec instance (one in Shared mode, serving every worker).
type WorkerStatus struct {
	// Index is the worker's index.
	Index int `json:"index"`
	// PID is the current (or last) process.
	PID int `json:"pid"`
	// Endpoint is where it serves: "host:port" or "unix:/path".
	Endpoint string `json:"endpoint"`
	// State is StateRunning, StateRestarting or StateExited.
	State string `json:"state"`
	// Healthy is the result of the last health check (true until the
	// first periodic check fails).
	Healthy bool `json:"healthy"`
	// HealthError says why the last health check failed.
	HealthError string `json:"health_error,omitempty"`
	// Restarts counts the times the worker was started again.
	Restarts int `json:"restarts"`
	// LastExit says how the last process of this worker that ended
	// exited, for example "signal: killed"; empty if none has.
	LastExit string `json:"last_exit,omitempty"`
	// Unresponsive, set in a StatsReport, says that the worker's process
	// is alive but did not answer for its stats within StatsTimeout, and
	// how it looks from /proc ("stopped": SIGSTOP or a debugger).
	Unresponsive string `json:"unresponsive,omitempty"`
}

// StatsTimeout bounds how long Stats waits for one child's answer: a
// child that is alive but gives none in that time (stopped, or hung) is
// reported as not answering, well within the driver's own wait for the
// supervisor's /stats.
const StatsTimeout = 2 * time.Second

// Stats fetches each child's stats from its admin /stats, in index order
// (the children asked at once, each within StatsTimeout), with each
// child's CPU time (its process and descendants, from /proc). A child
// that does not answer keeps only its Index, PID and CPU in the result,
// and its error (at its index of errs) names it and says how it exited,
// if it did. An Exec instance has only its Index, PID and CPU.
func (s *Supervisor) Stats(ctx context.Context) (out []worker.Stats, errs []error) {
	out = make([]worker.Stats, len(s.slots))
	errs = make([]error, len(s.slots))
	var wg sync.WaitGroup
	for i, sl := range s.slots {
		out[i].Index, out[i].PID = i, sl.cur.Load().pid
		if sl.stats == "" {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, StatsTimeout)
			defer cancel()
			var st worker.Stats
			if err := s.ask(ctx, sl, sl.stats, &st); err != nil {
				errs[i] = err
				return
			}
			out[i] = st
		})
	}
	wg.Wait()
	for i := range out {
		// The supervisor shares its children's PID namespace (on a host,
		// in a container or a pod): their CPU, forks included (gunicorn,
		// an Exec instance's own workers), is in /proc.
		if cpu, err := proccpu.Tree(out[i].PID); err == nil {
			out[i].CPU = cpu
		}
	}
	return out, errs
}

// Status returns the supervisor's view of each child process, in index
// order.
func (s *Supervisor) Status() []WorkerStatus {
	out := make([]WorkerStatus, len(s.slots))
	for i, sl := range s.slots {
		p := sl.cur.Load()
		st := WorkerStatus{Index: i, PID: p.pid, Endpoint: sl.socks.endpoint, State: StateRunning}
		if p.exitErr(i) != nil {
			st.State = StateExited
			if s.cfg.Restart && s.phase.Load() == phaseRunning && !p.cmd.ProcessState.Success() {
				st.State = StateRestarting
			}
		}
		sl.mu.Lock()
		st.Restarts, st.LastExit = sl.restarts, sl.lastExit
		st.Healthy, st.HealthError = sl.healthErr == "", sl.healthErr
		sl.mu.Unlock()
		if st.State != StateRunning {
			st.Healthy = false
		}
		out[i] = st
	}
	return out
}

// Handler returns the supervisor's aggregate admin handler: /healthz
// answers 200 when every worker is healthy and 503 with the reasons
// otherwise; /stats answers a StatsReport as JSON, with status 503 if a
// worker did not answer.
func (s *Supervisor) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), adminTimeout)
		defer cancel()
		if err := s.Healthy(ctx); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), adminTimeout)
		defer cancel()
		st, errs := s.Stats(ctx)
		rep := StatsReport{Workers: st, Status: s.Status()}
		rep.Steal, _ = proccpu.NewStealClock().ByCPU()
		if n, err := s.Foreign(); err == nil && n > 0 {
			rep.Foreign, rep.Port = n, s.slots[0].socks.port
		}
		for i, err := range errs {
			if err == nil {
				continue
			}
			rep.Errors = append(rep.Errors, err.Error())
			if rep.Status[i].State == StateRunning {
				rep.Status[i].Unresponsive = "stopped answering: no stats within " + StatsTimeout.String() + "; it is " + proccpu.State(rep.Status[i].PID)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if len(rep.Errors) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(rep)
	})
	return mux
}

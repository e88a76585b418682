package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/targets/balancer"
	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/topologies"
)

// DecodeStats decodes the answer of a process's stats endpoint of the given
// kind (topologies.StatsWorkers, StatsProxy or StatsNginx) into st, in the
// results format's types: the part of reading counters that does not
// depend on how the answer was fetched (over loopback, or through "lbbench
// probe" in a container).
func DecodeStats(kind string, body []byte, st *harness.Stats) error {
	switch kind {
	case topologies.StatsWorkers:
		var rep prefork.StatsReport
		if err := json.Unmarshal(body, &rep); err != nil {
			return fmt.Errorf("workers' stats: %w", err)
		}
		st.Workers = workerCounters(rep.Workers)
		st.Dead = append(st.Dead, deadWorkers(rep.Status)...)
		if rep.Foreign > 0 {
			// Not a death, but the run measured more than its workers.
			st.Dead = append(st.Dead, results.Failure{Process: fmt.Sprintf("port %d", rep.Port),
				Exit: fmt.Sprintf("%d listening sockets not the workers' joined their SO_REUSEPORT group and took a share of the connections", rep.Foreign), Alive: true})
		}
		for cpu, d := range rep.Steal {
			if st.Steal == nil {
				st.Steal = map[int]time.Duration{}
			}
			// Two processes of the server read one CPU's counter a moment
			// apart: keep the later (larger) reading.
			st.Steal[cpu] = max(st.Steal[cpu], d)
		}
		for _, w := range rep.Workers {
			if w.CPU > 0 {
				st.CPU = append(st.CPU, results.ProcessCPU{Role: results.RoleWorkers, Name: fmt.Sprintf("worker %d", w.Index), Worker: w.Index, Time: w.CPU})
			}
		}
	case topologies.StatsProxy:
		var ps balancer.Stats
		if err := json.Unmarshal(body, &ps); err != nil {
			return fmt.Errorf("proxy stats: %w", err)
		}
		st.Proxy = proxyCounters(&ps)
		if ps.CPU > 0 {
			st.CPU = append(st.CPU, results.ProcessCPU{Role: results.RoleProxy, Name: "lbbench proxy", Worker: -1, Time: ps.CPU})
		}
	case topologies.StatsNginx:
		ns, err := engines.ParseNginxStatus(bytes.NewReader(body))
		if err != nil {
			return err
		}
		st.Engine = engineCounters(&engines.Stats{Engine: engines.Nginx, Nginx: &ns})
	default:
		return fmt.Errorf("stats of kind %q cannot be decoded from an HTTP answer", kind)
	}
	return nil
}

// ReadHAProxyStats reads HAProxy's "show stat" from its stats socket at
// path into st.
func ReadHAProxyStats(ctx context.Context, path string, st *harness.Stats) error {
	rows, err := engines.ReadHAProxyStats(ctx, path)
	if err != nil {
		return err
	}
	st.Engine = engineCounters(&engines.Stats{Engine: engines.HAProxy, HAProxy: rows})
	return nil
}

// deadWorkers lists the workers a supervisor reports as not running, or
// started again, or as having exited at all, or as alive but not
// answering (stopped or hung): any of them means a worker failed during
// the run.
func deadWorkers(status []prefork.WorkerStatus) []results.Failure {
	var out []results.Failure
	for _, w := range status {
		if w.State == prefork.StateRunning && w.Restarts == 0 && w.LastExit == "" && w.Unresponsive == "" {
			continue
		}
		exit := w.LastExit
		if exit == "" {
			exit = w.State
		}
		alive := false
		if w.Unresponsive != "" {
			exit, alive = w.Unresponsive, true
		}
		if w.Restarts > 0 {
			exit += fmt.Sprintf(", restarted %d times", w.Restarts)
		}
		out = append(out, results.Failure{Process: fmt.Sprintf("worker %d (pid %d)", w.Index, w.PID), Exit: exit, Alive: alive})
	}
	return out
}

// DecodeFailedStats decodes the body of a stats answer other than 200 when
// it still says which workers died (a supervisor's 503); it reports
// whether it found any.
func DecodeFailedStats(kind string, body []byte, st *harness.Stats) bool {
	if kind != topologies.StatsWorkers || len(body) == 0 {
		return false
	}
	var probe harness.Stats
	if DecodeStats(kind, body, &probe) != nil || len(probe.Dead) == 0 {
		return false
	}
	st.Workers = probe.Workers
	st.Dead = append(st.Dead, probe.Dead...)
	return true
}

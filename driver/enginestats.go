package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/internal/proccpu"
	"github.com/lbbench/lbbench/results"
)

// EngineStatsSubcommand is the lbbench subcommand a driver runs inside a
// proxy engine's container when it cannot read the engine's process or
// stats socket from outside (the kubernetes driver): it prints an
// EngineReport as JSON.
const EngineStatsSubcommand = "engine-stats"

// FlagHAProxySocket is engine-stats' flag naming HAProxy's stats socket.
const FlagHAProxySocket = "haproxy-socket"

// EngineReport is what engine-stats reads in an engine's container.
type EngineReport struct {
	// CPU is the CPU time of the container's process tree: PID 1 (lbbench
	// guard) and its descendants, the engine's master and workers.
	CPU time.Duration `json:"cpu_ns"`
	// HAProxy is HAProxy's stats socket's table, when asked for.
	HAProxy []engines.HAProxyRow `json:"haproxy,omitempty"`
}

// EngineStatsArgs returns the engine-stats command line (subcommand
// first); haproxySocket may be empty.
func EngineStatsArgs(haproxySocket string) []string {
	a := []string{EngineStatsSubcommand}
	if haproxySocket != "" {
		a = append(a, "--"+FlagHAProxySocket, haproxySocket)
	}
	return a
}

// ReadEngineReport reads the report in the container it runs in: the CPU
// of the process tree under pid 1 and, when haproxySocket is not empty,
// HAProxy's stats.
func ReadEngineReport(ctx context.Context, haproxySocket string) (EngineReport, error) {
	var r EngineReport
	cpu, err := proccpu.Tree(1)
	if err != nil {
		return r, fmt.Errorf("engine-stats: CPU of pid 1's tree: %w", err)
	}
	r.CPU = cpu
	if haproxySocket != "" {
		if r.HAProxy, err = engines.ReadHAProxyStats(ctx, haproxySocket); err != nil {
			return r, err
		}
	}
	return r, nil
}

// DecodeEngineReport adds an engine-stats answer for engine to st: its
// CPU and, for HAProxy, its counters.
func DecodeEngineReport(engine string, body []byte, st *harness.Stats) error {
	var r EngineReport
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("%s stats: %w", engine, err)
	}
	if r.CPU > 0 {
		st.CPU = append(st.CPU, results.ProcessCPU{Role: results.RoleProxy, Name: engine, Worker: -1, Time: r.CPU})
	}
	if r.HAProxy != nil {
		st.Engine = engineCounters(&engines.Stats{Engine: engines.HAProxy, HAProxy: r.HAProxy})
	}
	return nil
}

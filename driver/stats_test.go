package driver

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/targets/prefork"
	"github.com/lbbench/lbbench/topologies"
)

// TestDecodeFailedStats: a supervisor's 503 answer that reports a worker
// exited (or restarted after dying) yields that worker in Dead, with how
// it ended; one where every worker runs yields nothing, and so does a
// body of another kind.
func TestDecodeFailedStats(t *testing.T) {
	rep := prefork.StatsReport{Status: []prefork.WorkerStatus{
		{Index: 0, PID: 10, State: prefork.StateRunning},
		{Index: 1, PID: 11, State: prefork.StateExited, LastExit: "signal: killed"},
		{Index: 2, PID: 13, State: prefork.StateRunning, Restarts: 1, LastExit: "exit status 2"},
	}}
	body, _ := json.Marshal(rep)
	var st harness.Stats
	if !DecodeFailedStats(topologies.StatsWorkers, body, &st) {
		t.Fatal("no dead worker found")
	}
	want := []results.Failure{
		{Process: "worker 1 (pid 11)", Exit: "signal: killed"},
		{Process: "worker 2 (pid 13)", Exit: "exit status 2, restarted 1 times"},
	}
	if !reflect.DeepEqual(st.Dead, want) {
		t.Errorf("dead %+v, want %+v", st.Dead, want)
	}
	alive, _ := json.Marshal(prefork.StatsReport{Status: rep.Status[:1]})
	if DecodeFailedStats(topologies.StatsWorkers, alive, &harness.Stats{}) {
		t.Error("a report with every worker running counted as dead")
	}
	if DecodeFailedStats(topologies.StatsProxy, body, &harness.Stats{}) {
		t.Error("a proxy's answer decoded as a supervisor's")
	}
}

// TestNameDeadWorker: the failure of a supervisor or of "lbbench guard"
// names the process that died first, from the line its log has.
func TestNameDeadWorker(t *testing.T) {
	f := NameDeadWorker(results.Failure{Process: "workers (pid 7)", Exit: "exit status 2",
		LogTail: []string{"starting", "prefork: worker 1 (pid 9) exited: signal: killed"}}, "workers")
	if f.Process != "workers: worker 1 (pid 9)" || f.Exit != "signal: killed; then workers (pid 7): exit status 2" {
		t.Errorf("supervisor: %+v", f)
	}
	f = NameDeadWorker(results.Failure{Process: "proxy (pid 8)", Exit: "exit status 1",
		LogTail: []string{"lbbench: guard: /usr/sbin/nginx: signal: killed"}}, "proxy")
	if f.Process != "proxy: /usr/sbin/nginx (the engine's master process)" || f.Exit != "signal: killed; then proxy (pid 8): exit status 1" {
		t.Errorf("guard: %+v", f)
	}
	f = NameDeadWorker(results.Failure{Process: "proxy (pid 8)", Exit: "exit status 1", LogTail: []string{"panic: boom"}}, "proxy")
	if f.Process != "proxy (pid 8)" || f.Exit != "exit status 1" {
		t.Errorf("no line to go by: %+v", f)
	}
}

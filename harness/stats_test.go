package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

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
	var st Stats
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
	if DecodeFailedStats(topologies.StatsWorkers, alive, &Stats{}) {
		t.Error("a report with every worker running counted as dead")
	}
	if DecodeFailedStats(topologies.StatsProxy, body, &Stats{}) {
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

// TestCreateNoFollow: a symbolic link planted where a generator's file
// goes is refused, and its target left untouched; a plain path is written.
func TestCreateNoFollow(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "generator-0.spec.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := writeNoFollow(link, []byte("spec")); err == nil {
		t.Error("wrote through a symbolic link")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target now holds %q", b)
	}
	plain := filepath.Join(dir, "generator-1.spec.json")
	if err := writeNoFollow(plain, []byte("spec")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(plain); string(b) != "spec" {
		t.Errorf("plain file holds %q", b)
	}
}

// TestAllFailed: a generator's measurement whose every request failed is
// a result (its "lbbench attack" exits 1 for it); one with a success, or
// no measurement at all, is not.
func TestAllFailed(t *testing.T) {
	dir := t.TempDir()
	failed := filepath.Join(dir, "failed.json")
	if err := (&results.Measurement{Requests: 10, Errors: 10}).WriteFile(failed); err != nil {
		t.Fatal(err)
	}
	some := filepath.Join(dir, "some.json")
	if err := (&results.Measurement{Requests: 10, Errors: 9}).WriteFile(some); err != nil {
		t.Fatal(err)
	}
	if !allFailed(failed) || allFailed(some) || allFailed(filepath.Join(dir, "missing.json")) {
		t.Errorf("allFailed: every request failed %v, one succeeded %v, no file %v; want true, false, false",
			allFailed(failed), allFailed(some), allFailed(filepath.Join(dir, "missing.json")))
	}
}

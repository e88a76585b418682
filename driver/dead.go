package driver

import (
	"fmt"
	"regexp"

	"github.com/lbbench/lbbench/results"
)

// NameDeadWorker returns f, the failure of a process of role, naming the
// worker that died first when f's log says one did: a supervisor ("lbbench
// serve") exits when one of its workers dies, and logs which.
func NameDeadWorker(f results.Failure, role string) results.Failure {
	for _, line := range f.LogTail {
		if m := workerExited.FindStringSubmatch(line); m != nil {
			f.Exit = fmt.Sprintf("%s; then %s: %s", m[2], f.Process, f.Exit)
			f.Process = role + ": " + m[1]
			break
		}
		// "lbbench guard" exits when the engine's master does (nginx's
		// workers would go on serving without it), and says how.
		if m := engineExited.FindStringSubmatch(line); m != nil {
			f.Exit = fmt.Sprintf("%s; then %s: %s", m[2], f.Process, f.Exit)
			f.Process = role + ": " + m[1] + " (the engine's master process)"
			break
		}
	}
	return f
}

// engineExited matches what "lbbench guard" logs when the engine it runs
// is killed (internal/guard).
var engineExited = regexp.MustCompile(`guard: (\S+): (signal: .+)$`)

// workerExited matches the line a workers' supervisor logs when one of its
// workers exits (targets/prefork).
var workerExited = regexp.MustCompile(`prefork: (worker \d+ \(pid \d+\)) exited: (.+)$`)

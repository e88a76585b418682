package main

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/job"
)

// examples are the "Examples:" of every command users type, by command
// path. Hidden commands (lbbench runs them itself) have none.
var examples = map[string]string{
	"lbbench": `  lbbench run                          # the default scenario on local processes
  lbbench scenarios                    # the built-in scenarios
  lbbench run policies -o out && lbbench report out`,
	"lbbench run": `  lbbench run                                         # the default scenario, 3 runs a variant
  lbbench run policies -o out --repeat 5              # a built-in scenario by name
  lbbench run my.yaml --until-decided --budget 3m     # stop as soon as every verdict is decided
  lbbench run gate --baseline origin/main             # gate this build against main's (exit 1 on a regression)
  lbbench run --driver docker --rate 50/1s --duration 20s`,
	"lbbench attack": `  echo "GET http://127.0.0.1:8080/work" | lbbench attack --rate 50/1s --duration 5s
  lbbench attack --targets targets.txt --rate 1/100ms --duration 0 -o r.bin --format vegeta   # Ctrl-C ends it
  lbbench attack --target http://127.0.0.1:8080/work default -o m.json   # a scenario's workload
  echo "GET http://127.0.0.1:8080/" | lbbench attack -duration=5s | tee results.bin | vegeta report   # vegeta's spelling`,
	"lbbench serve": `  lbbench serve --workers 8 --listen reuseport --port 8080 --admin 127.0.0.1:9000
  lbbench serve --workers 4 --listen shared --port 8080
  curl 127.0.0.1:9000/stats            # per-worker counters`,
	"lbbench proxy": `  lbbench proxy --listen 127.0.0.1:8000 --upstreams 127.0.0.1:8080,127.0.0.1:8081 --policy least_conn
  lbbench proxy --listen 127.0.0.1:8000 --upstreams 127.0.0.1:8080,127.0.0.1:8081 --policy p2c --upstream-keepalive=false`,
	"lbbench clean": `  lbbench clean                        # containers and networks of finished or killed runs
  lbbench clean --all --images         # everything lbbench made, images too`,
	"lbbench image": `  lbbench image --image-repo registry.example:5000/lbbench   # build and push
  lbbench image --archive lbbench.tar                        # write an archive for ctr images import`,
	"lbbench report": `  lbbench report out                   # out/report.html and the exports, again
  lbbench report out --verdicts out/verdicts.json
  lbbench report --claims -o claims a-dir b-dir`,
	"lbbench publish": `  lbbench publish out site             # site/index.html and the run's files, self-contained`,
	"lbbench compare": `  lbbench compare base/results.json cand/results.json -o cmp   # two runs of a scenario
  lbbench compare out --baseline-variant reuseport               # variants of one run
  lbbench compare out --calibrate                                # how noisy this machine is`,
	"lbbench model":       `  lbbench model balls --tasks 16 --workers 8 --at-least 4`,
	"lbbench model balls": `  lbbench model balls --tasks 16 --workers 8 --at-least 4`,
	"lbbench model sim": `  lbbench model sim                    # the default scenario, simulated
  lbbench model sim policies -o sim && lbbench report sim`,
	"lbbench selftest": `  lbbench selftest                     # generator vs vegeta at 1k-20k/s, worker vs nginx (make bench-self)
  lbbench selftest --rates 5000 --rounds 5 --duration 8s -o st
  lbbench compare base-st st            # two builds' selftests, same-named variants`,
	"lbbench version":   `  lbbench version`,
	"lbbench scenarios": `  lbbench scenarios`,
	"lbbench completion": `  source <(lbbench completion bash)
  lbbench completion zsh > "${fpath[1]}/_lbbench"`,
	"lbbench completion bash":       `  source <(lbbench completion bash)`,
	"lbbench completion zsh":        `  lbbench completion zsh > "${fpath[1]}/_lbbench"`,
	"lbbench completion fish":       `  lbbench completion fish > ~/.config/fish/completions/lbbench.fish`,
	"lbbench completion powershell": `  lbbench completion powershell | Out-String | Invoke-Expression`,
}

// exitStatuses is the exit status table of the root help and run's.
var exitStatuses = strings.Join([]string{
	"Exit status:",
	"  " + strconv.Itoa(job.ExitPass) + "    success (every run finished; the verdict, when gating, passed)",
	"  " + strconv.Itoa(job.ExitRegression) + "    the verdict is a regression",
	"  " + strconv.Itoa(job.ExitError) + "    a usage or infrastructure error (what finished is saved)",
	"  " + strconv.Itoa(job.ExitInconclusive) + "    the verdict is inconclusive (--inconclusive=pass|fail maps it)",
	"  " + strconv.Itoa(job.ExitClaims) + "    a claim fails (with --fail-on-claims, or report --claims)",
	"  " + strconv.Itoa(job.ExitFailedRuns) + "    runs failed: a process died or stopped answering (recorded, left out of comparisons)",
	"  " + strconv.Itoa(job.ExitInterrupted) + "  interrupted (Ctrl-C); what finished is saved",
}, "\n")

// addExamples sets the examples of cmd and every command below it.
func addExamples(cmd *cobra.Command) {
	if ex, ok := examples[cmd.CommandPath()]; ok {
		cmd.Example = ex
	}
	for _, c := range cmd.Commands() {
		addExamples(c)
	}
}

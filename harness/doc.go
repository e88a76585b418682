// Package harness is the run loop: it follows a scenario's schedule
// (scenario.Scenario.Schedule: rounds, each running every variant once in
// a fresh random order), and for each run has a Driver bring the variant
// up (the driver renders its plan, topologies.RenderRun), has the deployment's Attacker offer the
// workload, collects the counters, judges the run's validity and takes
// the deployment down again, whatever happens. It checkpoints the results
// after every run, so that an interrupted scenario keeps what it
// finished. What it returns is a results.Results, the unit of all later
// statistics.
//
// It holds the loop (run.go), the interfaces it drives (driver.go:
// Driver, Deployment, Attacker, Stats; and Neighbours, the other lbbench
// runs on the host, in run.go), the validity judgement (validity.go:
// the generator, the host's steal, other lbbench runs) and what retries
// made again, by cause (remade.go). The drivers live in driver/local and
// driver/docker, the load generator in loadgen: harness depends on none
// of them, nor on topologies or any targets/* package, even indirectly,
// and knows only the interfaces (internal/archtest holds it to that).
//
// The package never prints to a terminal and never handles signals: callers
// pass a context (with a hard stop, package internal/hardstop) and observe
// progress through WithProgress.
package harness

package harness

import (
	"context"
	"net/http"
	"net/url"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"

	"github.com/lbbench/lbbench/workloads"
)

// attack offers spec's load to entry, open loop, and records it. Warm-up
// requests go over the same connections and are discarded by the recorder.
// On ctx cancellation it stops sending, waits for outstanding requests and
// returns what it recorded with ctx's error.
func attack(ctx context.Context, entry string, spec workloads.Spec) (*recorder, Generator, error) {
	tg, err := workloads.NewTargeter(spec, entry)
	if err != nil {
		return nil, Generator{}, err
	}
	pacer := workloads.NewPacer(spec)
	conns := spec.Clients.Connections
	gen := Generator{Connections: conns, KeepAlive: spec.Clients.KeepAliveOn()}
	atk := vegeta.NewAttacker(
		vegeta.Timeout(spec.Timeout),
		vegeta.KeepAlive(gen.KeepAlive),
		vegeta.Connections(conns),
		vegeta.MaxConnections(conns),
		vegeta.Workers(uint64(min(conns, workloads.MaxInFlight))),
		vegeta.MaxWorkers(workloads.MaxInFlight),
		// The body is never needed; vegeta would otherwise keep it.
		vegeta.MaxBody(0),
		vegeta.Redirects(vegeta.NoFollow),
		// Load goes straight to the entry point, never through a proxy from
		// the environment.
		vegeta.Proxy(func(*http.Request) (*url.URL, error) { return nil, nil }),
	)
	rec := newRecorder(pacer, spec, tg.Classes())

	cpu0 := processCPU()
	results := atk.Attack(tg.Vegeta(), pacer, 0, "")
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	for res := range results {
		rec.add(res)
	}
	stop()
	gen.CPU = processCPU() - cpu0
	return rec, gen, ctx.Err()
}

// processCPU is this process's user plus system CPU time so far.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

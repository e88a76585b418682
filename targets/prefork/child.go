package prefork

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"

	"github.com/lbbench/lbbench/targets/worker"
)

// WorkerMain is the child side: it reads the worker.Config from the
// environment variable EnvWorkerConfig, serves a worker.Worker on the main
// listener inherited as fd 3 (accepting with the config's strategy) and the
// admin listener inherited as fd 4 until ctx is done, then drains and
// returns. The caller turns SIGTERM and SIGINT into the cancellation of
// ctx.
func WorkerMain(ctx context.Context) error {
	raw, ok := os.LookupEnv(EnvWorkerConfig)
	if !ok {
		return fmt.Errorf("prefork: %s is not set: worker processes are started by lbbench serve, not by hand", EnvWorkerConfig)
	}
	var cfg worker.Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return fmt.Errorf("prefork: decode %s: %w", EnvWorkerConfig, err)
	}
	w, err := worker.New(cfg)
	if err != nil {
		return fmt.Errorf("prefork: %w", err)
	}
	cfg = cfg.WithDefaults()
	limitProcs(cfg.Concurrency)
	ln, err := worker.ListenFD(inheritedFD, cfg.Accept)
	if err != nil {
		return fmt.Errorf("prefork: inherited main listener: %w", err)
	}
	admin, err := worker.ListenFD(inheritedFD+1, worker.AcceptNetpoll)
	if err != nil {
		ln.Close()
		return fmt.Errorf("prefork: inherited admin listener: %w", err)
	}
	return w.Serve(ctx, ln, admin)
}

// limitProcs runs the worker's Go code on at most concurrency CPUs at a
// time (GOMAXPROCS), unless the environment sets GOMAXPROCS. A worker that
// serves one request at a time is one task, as a single-threaded server's
// process is; with a P per CPU, the runtime wakes a second thread to look
// for work at each request and hands the first one's work across, which
// on 2 CPUs cost the worker about a third of its CPU per request.
func limitProcs(concurrency int) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set || concurrency < 1 {
		return
	}
	if n := min(concurrency, runtime.NumCPU()); n < runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(n)
	}
}

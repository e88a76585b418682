package prefork

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"

	"github.com/lbbench/lbbench/targets/worker"
)

// WorkerMain is the child side: it reads the worker.Config from the
// environment variable EnvWorkerConfig, serves a worker.Worker on the main
// listener inherited as fd 3 and the admin listener inherited as fd 4 until
// ctx is done, then drains and returns. The caller turns SIGTERM and SIGINT
// into the cancellation of ctx.
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
	ln, err := fileListener(3, "main")
	if err != nil {
		return err
	}
	admin, err := fileListener(4, "admin")
	if err != nil {
		ln.Close()
		return err
	}
	return w.Serve(ctx, ln, admin)
}

// fileListener turns the inherited fd into a listener and closes the fd
// (the listener holds a duplicate).
func fileListener(fd uintptr, name string) (net.Listener, error) {
	f := os.NewFile(fd, name)
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("prefork: inherited %s listener (fd %d): %w", name, fd, err)
	}
	return ln, nil
}

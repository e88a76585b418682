package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/errdefs"
	"github.com/docker/docker/pkg/stdcopy"
)

// removeTimeout bounds the removal of a run's containers, volume and
// network once stopping them is over (or was cut short).
const removeTimeout = 30 * time.Second

// Down stops the plan's containers in reverse order (SIGTERM: the workers
// drain), saves every container's log, and removes the containers, the
// volume and the network. It is idempotent and goes on past errors. When
// ctx ends (hardstop.Teardown: its deadline, or a second Ctrl-C) it
// stops waiting for containers to stop: the forced removal kills what is
// left, and the removals run under a context of their own, so nothing
// stays behind.
func (dep *deployment) Down(ctx context.Context) error {
	dep.downOnce.Do(func() {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		var errs []error
		// The generator is idle (or killed): it goes while the server's
		// containers stop in reverse order of start.
		var genErr error
		var wg sync.WaitGroup
		if dep.gen != nil {
			wg.Go(func() { genErr = dep.remove(ctx, cleanup, dep.gen) })
		}
		boxes := slices.Clone(dep.boxes)
		slices.Reverse(boxes)
		for _, b := range boxes {
			errs = append(errs, dep.remove(ctx, cleanup, b))
		}
		wg.Wait()
		errs = append(errs, genErr)
		api := dep.d.c.api
		if dep.volume != "" {
			if err := api.VolumeRemove(cleanup, dep.volume, true); err != nil && !errdefs.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("remove volume: %w", err))
			}
		}
		if dep.network != "" {
			if err := api.NetworkRemove(cleanup, dep.network); err != nil && !errdefs.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("remove network: %w", err))
			}
		}
		if err := errors.Join(errs...); err != nil {
			dep.downErr = fmt.Errorf("docker: %s: down: %w", dep.plan.ID, err)
		}
	})
	return dep.downErr
}

// remove stops b (waiting until stop ends), saves its log and removes it
// (under cleanup). A stop cut short by stop's end is no error: the forced
// removal kills the container.
func (dep *deployment) remove(stop, cleanup context.Context, b *box) error {
	api := dep.d.c.api
	timeout := int(StopTimeout / time.Second)
	if b.role == RoleGenerator {
		timeout = 1
	}
	var errs []error
	if info, err := api.ContainerInspect(cleanup, b.id); err == nil && info.State != nil && info.State.Paused {
		api.ContainerUnpause(cleanup, b.id) // the daemon stops no paused container
	}
	if stop.Err() == nil {
		if err := api.ContainerStop(stop, b.id, container.StopOptions{Timeout: &timeout}); err != nil && !errdefs.IsNotFound(err) && stop.Err() == nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", b.name, err))
		}
	}
	if err := dep.saveLog(cleanup, b); err != nil {
		errs = append(errs, err)
	}
	if err := dep.d.c.removeContainer(cleanup, b.id); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", b.name, err))
	}
	return errors.Join(errs...)
}

func (dep *deployment) saveLog(ctx context.Context, b *box) error {
	rc, err := dep.d.c.api.ContainerLogs(ctx, b.id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Timestamps: true})
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("log of %s: %w", b.name, err)
	}
	defer rc.Close()
	f, err := os.Create(b.logPath)
	if err != nil {
		return fmt.Errorf("log of %s: %w", b.name, err)
	}
	_, err = stdcopy.StdCopy(f, f, rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("log of %s: %w", b.name, err)
	}
	return nil
}

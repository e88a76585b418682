package docker

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// Exec runs cmd in the running container id, copies its standard output
// and error to stdout and stderr, and returns its exit code. When ctx ends
// first it stops reading and returns ctx's error; the command itself runs
// on until it exits or its container stops.
func (c *Client) Exec(ctx context.Context, id string, cmd []string, stdout, stderr io.Writer) (int, error) {
	ex, err := c.api.ContainerExecCreate(ctx, id, container.ExecOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return -1, fmt.Errorf("docker: exec %v: %w", cmd, err)
	}
	att, err := c.api.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return -1, fmt.Errorf("docker: exec %v: attach: %w", cmd, err)
	}
	defer att.Close()
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, att.Reader)
		copied <- err
	}()
	select {
	case <-ctx.Done():
		att.Close()
		return -1, ctx.Err()
	case err := <-copied:
		if err != nil {
			return -1, fmt.Errorf("docker: exec %v: output: %w", cmd, err)
		}
	}
	// The stream ends as the command exits; the daemon may take a moment
	// to record its exit code.
	for range 200 {
		st, err := c.api.ContainerExecInspect(ctx, ex.ID)
		if err != nil {
			return -1, fmt.Errorf("docker: exec %v: inspect: %w", cmd, err)
		}
		if !st.Running {
			return st.ExitCode, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return -1, fmt.Errorf("docker: exec %v: still running after its output ended", cmd)
}

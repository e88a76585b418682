package docker

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/errdefs"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/engines"
)

// HostImage, as the image of an engine (--engine-image nginx=host), asks
// for an image built FROM scratch from this machine's own binary of the
// engine and the shared libraries it loads (HostEngineImage).
const HostImage = driver.HostEngineImage

// FindEngine implements topologies.EngineFinder: the engine's binary is the
// one in its image (driver.EngineImages).
func (d *Driver) FindEngine(ctx context.Context, engine string) (engines.Binary, error) {
	return d.engines.Find(ctx, engine)
}

// noEngineImage is the error for an engine given no --engine-image.
func noEngineImage(engine string) error {
	return fmt.Errorf("docker: under --driver docker the proxy engine %s runs from an image you name: --engine-image %s=IMAGE (an image on this machine with %s on its PATH; lbbench pulls nothing), or --engine-image %s=%s to build one from this machine's %s", engine, engine, engine, engine, HostImage, engine)
}

// resolveEngine is the driver's driver.ResolveEngine: it builds the image
// first for HostImage, checks the image is there, and reads the engine's
// version from a one-off container.
func (d *Driver) resolveEngine(ctx context.Context, engine, img string) (string, engines.Binary, error) {
	if img == HostImage {
		tag, err := d.c.HostEngineImage(ctx, engine)
		if err != nil {
			return "", engines.Binary{}, err
		}
		img = tag
	}
	if _, err := d.c.api.ImageInspect(ctx, img); err != nil {
		if errdefs.IsNotFound(err) {
			return "", engines.Binary{}, fmt.Errorf("docker: image %s (for %s) is not on this machine, and lbbench does not pull images (there may be no registry to pull from): docker pull or docker load it first, or use --engine-image %s=%s", img, engine, engine, HostImage)
		}
		return "", engines.Binary{}, fmt.Errorf("docker: inspect image %s: %w", img, err)
	}
	b, err := driver.EngineVersionIn(ctx, "docker", engine, img, func(ctx context.Context, argv []string) (string, int, error) {
		return d.runOnce(ctx, "engine-"+engine, img, argv[:1], argv[1:], nil, "")
	})
	return img, b, err
}

// runOnce runs a one-off container of image (entrypoint and cmd) with
// mounts in network mode netMode ("none" when empty) and returns its output
// and exit status, then removes it.
func (d *Driver) runOnce(ctx context.Context, role, image string, entrypoint, cmd []string, mounts []mount.Mount, netMode string) (string, int, error) {
	if netMode == "" {
		netMode = "none"
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	labels := driver.Labels(d.session, d.owner, role)
	name := fmt.Sprintf("lbbench-%s-%s-%d", d.session, role, d.oneOff.Add(1))
	hc := &container.HostConfig{NetworkMode: container.NetworkMode(netMode), ReadonlyRootfs: true, Mounts: mounts}
	d.harden(hc)
	resp, err := d.c.api.ContainerCreate(ctx,
		&container.Config{Image: image, Entrypoint: entrypoint, Cmd: cmd, Labels: labels, User: containerUser()},
		hc, nil, nil, name)
	if err != nil {
		return "", -1, fmt.Errorf("docker: create %s: %w", name, err)
	}
	defer d.c.removeContainer(context.WithoutCancel(ctx), resp.ID)
	exited, waitErr := d.c.api.ContainerWait(ctx, resp.ID, container.WaitConditionNextExit)
	if err := d.c.api.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		return "", -1, fmt.Errorf("docker: start %s %v in %s: %w", name, append(entrypoint, cmd...), image, err)
	}
	var code int
	select {
	case w := <-exited:
		code = int(w.StatusCode)
	case err := <-waitErr:
		return "", -1, fmt.Errorf("docker: %s: %w", name, err)
	}
	rc, err := d.c.api.ContainerLogs(ctx, resp.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return "", -1, fmt.Errorf("docker: log of %s: %w", name, err)
	}
	defer rc.Close()
	var out bytes.Buffer
	stdcopy.StdCopy(&out, &out, rc)
	return out.String(), code, nil
}

// HostEngineImage builds, unless it exists, an image FROM scratch holding
// this machine's binary of engine (nginx, haproxy) and what it needs
// (driver.HostEngine), and returns its tag, lbbench-ENGINE:<content hash>.
// It is how a machine with no registry runs the real engines in
// containers.
func (c *Client) HostEngineImage(ctx context.Context, engine string) (string, error) {
	root, err := driver.HostEngine(ctx, engine)
	if err != nil {
		return "", fmt.Errorf("docker: %w", err)
	}
	tag := "lbbench-" + engine + ":" + root.Tag
	if _, err := c.api.ImageInspect(ctx, tag); err == nil {
		return tag, nil
	}
	var files []contextFile
	for _, f := range root.Files {
		files = append(files, contextFile{"rootfs" + f.Path, f.Mode, f.Data})
	}
	files = append(files, contextFile{"Dockerfile", 0o644, []byte("FROM scratch\nCOPY rootfs/ /\nENV PATH=" + root.PathEnv + "\n")})
	if err := c.buildImage(ctx, tag, files); err != nil {
		return "", err
	}
	return tag, nil
}

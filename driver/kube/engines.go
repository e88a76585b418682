package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/engines"
)

// RoleEngineCheck labels the one-off pod that reads an engine image's
// version.
const RoleEngineCheck = "engine-check"

// oneOffTimeout bounds a one-off pod, its image's pull included.
const oneOffTimeout = time.Minute

// FindEngine implements topologies.EngineFinder: the engine's binary is the
// one in its image (Config.EngineImages). driver.HostEngineImage builds
// the image from this machine's binary and pushes it to Config.ImageRepo;
// another image is run once on the server's node to read its version,
// which also shows the node can pull it, before any run starts.
func (d *Driver) FindEngine(ctx context.Context, engine string) (engines.Binary, error) {
	d.engMu.Lock()
	defer d.engMu.Unlock()
	if b, ok := d.engineBins[engine]; ok {
		return b, nil
	}
	if engines.VersionArg(engine) == "" {
		return engines.Binary{}, fmt.Errorf("kubernetes: unknown proxy engine %q (known: %v)", engine, engines.Names())
	}
	img, ok := d.cfg.EngineImages[engine]
	if !ok {
		return engines.Binary{}, fmt.Errorf("kubernetes: under --driver kubernetes the proxy engine %s runs from an image you name: --engine-image %s=IMAGE (one the nodes can pull or already have, with %s on its PATH), or --engine-image %s=%s with --image-repo to build one from this machine's %s and push it", engine, engine, engine, engine, driver.HostEngineImage, engine)
	}
	var b engines.Binary
	if img == driver.HostEngineImage {
		if d.cfg.ImageRepo == "" {
			return engines.Binary{}, fmt.Errorf("kubernetes: --engine-image %s=%s builds an image of this machine's %s, which needs --image-repo REGISTRY/NAME to push it to", engine, driver.HostEngineImage, engine)
		}
		root, err := driver.HostEngine(ctx, engine)
		if err != nil {
			return engines.Binary{}, fmt.Errorf("kubernetes: %w", err)
		}
		im, err := HostEngineImage(root, d.cfg.ImageRepo)
		if err != nil {
			return engines.Binary{}, err
		}
		if err := im.Push(); err != nil {
			return engines.Binary{}, err
		}
		d.cfg.Logf("pushed %s (this machine's %s)", im.Ref, engine)
		img, b = im.Ref.String(), root.Binary
	} else {
		out, code, err := d.runOnce(ctx, img, []string{engine, engines.VersionArg(engine)})
		if err != nil {
			return engines.Binary{}, err
		}
		if code != 0 {
			return engines.Binary{}, fmt.Errorf("kubernetes: %s %s in image %s: exit status %d: %s", engine, engines.VersionArg(engine), img, code, strings.TrimSpace(out))
		}
		if b, err = engines.ParseVersion(engine, engine, []byte(out)); err != nil {
			return engines.Binary{}, fmt.Errorf("kubernetes: image %s: %w", img, err)
		}
	}
	b.Version += " (image " + img + ")"
	d.engineBins[engine] = b
	d.engineRefs[engine] = img
	return b, nil
}

// engineImage returns the image reference engine runs from (FindEngine
// has resolved it).
func (d *Driver) engineImage(engine string) (string, error) {
	d.engMu.Lock()
	defer d.engMu.Unlock()
	ref, ok := d.engineRefs[engine]
	if !ok {
		return "", fmt.Errorf("kubernetes: no image for proxy engine %s (--engine-image %s=IMAGE)", engine, engine)
	}
	return ref, nil
}

// runOnce runs command in a one-off pod of image on the server's node and
// returns its output and exit status; the pod is deleted in any case. An
// image the node cannot pull is an error at once, with the kubelet's
// word.
func (d *Driver) runOnce(ctx context.Context, image string, command []string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, oneOffTimeout)
	defer cancel()
	api := d.c.cs.CoreV1().Pods(d.c.Namespace)
	d.mu.Lock()
	d.oneOff++
	name := fmt.Sprintf("lbbench-%s-%s-%d", d.session, RoleEngineCheck, d.oneOff)
	d.mu.Unlock()
	grace := int64(0)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: driver.Labels(d.session, d.owner, RoleEngineCheck)},
		Spec: podSpec(d.server, grace, []corev1.Container{{
			Name: "engine", Image: image, Command: command, ImagePullPolicy: corev1.PullIfNotPresent,
			SecurityContext: restricted(),
		}}),
	}
	if _, err := api.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return "", -1, fmt.Errorf("kubernetes: create pod %s: %w", name, err)
	}
	defer func() {
		del, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		api.Delete(del, name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	}()
	for {
		p, err := api.Get(ctx, name, getOpts)
		if err == nil {
			for _, s := range p.Status.ContainerStatuses {
				if w := s.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff" || w.Reason == "InvalidImageName") {
					return "", -1, fmt.Errorf("kubernetes: node %s cannot pull image %s: %s: %s", d.server, image, w.Reason, w.Message)
				}
				if t := s.State.Terminated; t != nil {
					b, err := api.GetLogs(name, &corev1.PodLogOptions{Container: "engine"}).DoRaw(ctx)
					if err != nil {
						return "", -1, fmt.Errorf("kubernetes: log of pod %s: %w", name, err)
					}
					return string(b), int(t.ExitCode), nil
				}
			}
		}
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return "", -1, fmt.Errorf("kubernetes: pod %s (image %s) did not finish within %s", name, image, oneOffTimeout)
			}
			return "", -1, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

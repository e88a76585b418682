package kube

import (
	"context"
	"fmt"
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
// one in its image (WithEngineImages, driver.EngineImages).
// driver.HostEngineImage builds the image from this machine's binary and
// pushes it to WithImageRepo's repository; another image is run once on
// the server's node to read its version, which also shows the node can
// pull it, before any run starts.
func (d *Driver) FindEngine(ctx context.Context, engine string) (engines.Binary, error) {
	return d.engines.Find(ctx, engine)
}

// noEngineImage is the error for an engine given no --engine-image.
func noEngineImage(engine string) error {
	return fmt.Errorf("kubernetes: under --driver kubernetes the proxy engine %s runs from an image you name: --engine-image %s=IMAGE (one the nodes can pull or already have, with %s on its PATH), or --engine-image %s=%s with --image-repo to build one from this machine's %s and push it", engine, engine, engine, engine, driver.HostEngineImage, engine)
}

// resolveEngine is the driver's driver.ResolveEngine (see FindEngine).
func (d *Driver) resolveEngine(ctx context.Context, engine, img string) (string, engines.Binary, error) {
	if img != driver.HostEngineImage {
		b, err := driver.EngineVersionIn(ctx, "kubernetes", engine, img, func(ctx context.Context, argv []string) (string, int, error) {
			return d.runOnce(ctx, img, argv)
		})
		return img, b, err
	}
	if d.cfg.ImageRepo == "" {
		return "", engines.Binary{}, fmt.Errorf("kubernetes: --engine-image %s=%s builds an image of this machine's %s, which needs --image-repo REGISTRY/NAME to push it to", engine, driver.HostEngineImage, engine)
	}
	root, err := driver.HostEngine(ctx, engine)
	if err != nil {
		return "", engines.Binary{}, fmt.Errorf("kubernetes: %w", err)
	}
	im, err := HostEngineImage(root, d.cfg.ImageRepo)
	if err != nil {
		return "", engines.Binary{}, err
	}
	if err := im.Push(); err != nil {
		return "", engines.Binary{}, err
	}
	d.cfg.Logf("pushed %s (this machine's %s)", im.Ref, engine)
	return im.Ref.String(), root.Binary, nil
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

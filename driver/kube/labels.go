package kube

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lbbench/lbbench/driver"
)

// Labels on every object lbbench creates in a cluster, named as the docker
// driver's are.
const (
	LabelManaged = "lbbench.managed" // "true"
	LabelSession = "lbbench.session" // one lbbench process's driver
	LabelRun     = "lbbench.run"     // the run inside the session
	LabelRole    = "lbbench.role"    // server, generator
	// LabelOwner is "host.pid.start" of the lbbench process that created
	// the object (driver.Owner): Clean removes objects whose owner is
	// gone.
	LabelOwner = "lbbench.owner"
	// AnnotationPlan is the run's id in the results.
	AnnotationPlan = "lbbench.plan"
)

// ownerSep joins an owner label's parts: label values allow no slash.
const ownerSep = "."

var labelValue = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

// ownerLabel is this process's owner label, or "unknown" when the host
// name makes no valid label value (then Clean takes the objects as
// another host's: only --all removes them).
func ownerLabel() string {
	o := driver.Owner(ownerSep)
	if !labelValue.MatchString(o) {
		return "unknown"
	}
	return o
}

// CleanFilter selects what Clean removes.
type CleanFilter struct {
	// All removes objects whose lbbench process still runs, too.
	All bool
	// Session, when set, limits Clean to one driver's objects.
	Session string
}

// CleanReport lists what Clean removed, by kind.
type CleanReport struct {
	Pods, Services, ConfigMaps []string
}

// Empty reports whether nothing was removed.
func (r CleanReport) Empty() bool { return len(r.Pods)+len(r.Services)+len(r.ConfigMaps) == 0 }

func (r CleanReport) String() string {
	var parts []string
	for _, x := range []struct {
		what  string
		names []string
	}{{"pods", r.Pods}, {"services", r.Services}, {"config maps", r.ConfigMaps}} {
		if len(x.names) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s (%s)", len(x.names), x.what, strings.Join(x.names, ", ")))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func selector(session string) metav1.ListOptions {
	s := LabelManaged + "=true"
	if session != "" {
		s += "," + LabelSession + "=" + session
	}
	return metav1.ListOptions{LabelSelector: s}
}

// Clean deletes, at once (no grace period), the pods, services and config
// maps of the client's namespace labelled lbbench.managed=true whose
// owning lbbench process is no longer running; with f.All, every one of
// them. It goes on past errors and returns them together.
func (c *Client) Clean(ctx context.Context, f CleanFilter) (CleanReport, error) {
	var rep CleanReport
	var errs []error
	stale := func(labels map[string]string) bool { return f.All || !driver.OwnerAlive(labels[LabelOwner], ownerSep) }
	zero := int64(0)
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	core := c.cs.CoreV1()
	pods, err := core.Pods(c.Namespace).List(ctx, selector(f.Session))
	if err != nil {
		return rep, fmt.Errorf("kubernetes: list pods: %w", err)
	}
	for _, p := range pods.Items {
		if !stale(p.Labels) {
			continue
		}
		if err := core.Pods(c.Namespace).Delete(ctx, p.Name, del); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete pod %s: %w", p.Name, err))
			continue
		}
		rep.Pods = append(rep.Pods, p.Name)
	}
	svcs, err := core.Services(c.Namespace).List(ctx, selector(f.Session))
	if err != nil {
		errs = append(errs, fmt.Errorf("list services: %w", err))
	} else {
		for _, s := range svcs.Items {
			if !stale(s.Labels) {
				continue
			}
			if err := core.Services(c.Namespace).Delete(ctx, s.Name, del); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete service %s: %w", s.Name, err))
				continue
			}
			rep.Services = append(rep.Services, s.Name)
		}
	}
	cms, err := core.ConfigMaps(c.Namespace).List(ctx, selector(f.Session))
	if err != nil {
		errs = append(errs, fmt.Errorf("list config maps: %w", err))
	} else {
		for _, m := range cms.Items {
			if !stale(m.Labels) {
				continue
			}
			if err := core.ConfigMaps(c.Namespace).Delete(ctx, m.Name, del); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete config map %s: %w", m.Name, err))
				continue
			}
			rep.ConfigMaps = append(rep.ConfigMaps, m.Name)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("kubernetes: clean: %w", err)
	}
	return rep, nil
}

// Managed lists the pods, services and config maps labelled
// lbbench.managed=true in the namespace, of one session when it is set.
func (c *Client) Managed(ctx context.Context, session string) (CleanReport, error) {
	var rep CleanReport
	core := c.cs.CoreV1()
	pods, err := core.Pods(c.Namespace).List(ctx, selector(session))
	if err != nil {
		return rep, err
	}
	for _, p := range pods.Items {
		rep.Pods = append(rep.Pods, p.Name)
	}
	svcs, err := core.Services(c.Namespace).List(ctx, selector(session))
	if err != nil {
		return rep, err
	}
	for _, s := range svcs.Items {
		rep.Services = append(rep.Services, s.Name)
	}
	cms, err := core.ConfigMaps(c.Namespace).List(ctx, selector(session))
	if err != nil {
		return rep, err
	}
	for _, m := range cms.Items {
		rep.ConfigMaps = append(rep.ConfigMaps, m.Name)
	}
	return rep, nil
}

// RunningPods counts the running pods of session.
func (c *Client) RunningPods(ctx context.Context, session string) (int, error) {
	pods, err := c.cs.CoreV1().Pods(c.Namespace).List(ctx, selector(session))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			n++
		}
	}
	return n, nil
}

// PatchNode applies a strategic merge patch to node (tests cordon a node
// with it).
func (c *Client) PatchNode(ctx context.Context, node string, patch []byte) error {
	_, err := c.cs.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

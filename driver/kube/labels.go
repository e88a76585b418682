package kube

import (
	"context"
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lbbench/lbbench/driver"
)

// AnnotationPlan is the annotation of the run's pods that holds the
// run's id in the results (the label driver.LabelPlan on the docker
// driver's objects).
const AnnotationPlan = driver.LabelPlan

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

// The kinds of object the driver labels, as Clean and Managed name them.
const (
	KindPods       = "pods"
	KindServices   = "services"
	KindConfigMaps = "config maps"
)

func selector(session string) metav1.ListOptions {
	s := driver.LabelManaged + "=true"
	if session != "" {
		s += "," + driver.LabelSession + "=" + session
	}
	return metav1.ListOptions{LabelSelector: s}
}

// labelled is what the driver labels in the client's namespace: pods,
// then services and config maps.
func (c *Client) labelled() driver.Labelled {
	core := c.cs.CoreV1()
	pods, svcs, cms := core.Pods(c.Namespace), core.Services(c.Namespace), core.ConfigMaps(c.Namespace)
	return driver.Labelled{Driver: "kubernetes", OwnerSep: ownerSep, Kinds: []driver.Kind{
		kind{name: KindPods, one: "pod", del: pods.Delete, list: func(ctx context.Context, o metav1.ListOptions) ([]metav1.ObjectMeta, error) {
			l, err := pods.List(ctx, o)
			if err != nil {
				return nil, err
			}
			return metas(l.Items, func(p corev1.Pod) metav1.ObjectMeta { return p.ObjectMeta }), nil
		}},
		kind{name: KindServices, one: "service", del: svcs.Delete, list: func(ctx context.Context, o metav1.ListOptions) ([]metav1.ObjectMeta, error) {
			l, err := svcs.List(ctx, o)
			if err != nil {
				return nil, err
			}
			return metas(l.Items, func(s corev1.Service) metav1.ObjectMeta { return s.ObjectMeta }), nil
		}},
		kind{name: KindConfigMaps, one: "config map", del: cms.Delete, list: func(ctx context.Context, o metav1.ListOptions) ([]metav1.ObjectMeta, error) {
			l, err := cms.List(ctx, o)
			if err != nil {
				return nil, err
			}
			return metas(l.Items, func(m corev1.ConfigMap) metav1.ObjectMeta { return m.ObjectMeta }), nil
		}},
	}}
}

func metas[T any](items []T, meta func(T) metav1.ObjectMeta) []metav1.ObjectMeta {
	out := make([]metav1.ObjectMeta, len(items))
	for i, it := range items {
		out[i] = meta(it)
	}
	return out
}

// kind implements driver.Kind for one kind of object in the namespace.
type kind struct {
	name, one string // plural and singular
	list      func(ctx context.Context, opts metav1.ListOptions) ([]metav1.ObjectMeta, error)
	del       func(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

var _ driver.Kind = kind{}

func (k kind) Name() string { return k.name }

func (k kind) List(ctx context.Context, session string) ([]driver.Object, error) {
	l, err := k.list(ctx, selector(session))
	if err != nil {
		return nil, err
	}
	out := make([]driver.Object, len(l))
	for i, m := range l {
		out[i] = driver.Object{Name: m.Name, ID: m.Name, Labels: m.Labels}
	}
	return out, nil
}

// Remove deletes o with no grace period.
func (k kind) Remove(ctx context.Context, o driver.Object) error {
	zero := int64(0)
	if err := k.del(ctx, o.ID, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s: %w", k.one, o.Name, err)
	}
	return nil
}

// Clean deletes, at once (no grace period), the pods, services and config
// maps of the client's namespace labelled lbbench.managed=true whose
// owning lbbench process is no longer running; with f.All, every one of
// them (driver.Labelled.Clean).
func (c *Client) Clean(ctx context.Context, f driver.CleanFilter) (driver.Objects, error) {
	return c.labelled().Clean(ctx, f)
}

// Managed lists the pods, services and config maps labelled
// lbbench.managed=true in the namespace, of one session when it is set.
func (c *Client) Managed(ctx context.Context, session string) (driver.Objects, error) {
	return c.labelled().Managed(ctx, session)
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

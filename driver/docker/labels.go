package docker

import (
	"context"
	"fmt"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/errdefs"

	"github.com/lbbench/lbbench/driver"
)

// ownerSep joins the parts of an owner label (driver.Owner).
const ownerSep = "/"

// owner identifies this process in driver.LabelOwner.
func owner() string { return driver.Owner(ownerSep) }

// The kinds of object the driver labels, as Clean and Managed name them.
const (
	KindContainers = "containers"
	KindNetworks   = "networks"
	KindVolumes    = "volumes"
)

// labelled is what the driver labels on the daemon: containers (running
// or not), then the networks and volumes they used.
func (c *Client) labelled() driver.Labelled {
	return driver.Labelled{Driver: "docker", OwnerSep: ownerSep, Kinds: []driver.Kind{containers{c}, networks{c}, volumes{c}}}
}

// Clean removes the containers (running or not), then the networks and
// volumes, labelled lbbench.managed=true whose owning lbbench process is no
// longer running; with f.All, every one of them, including those of runs in
// progress (driver.Labelled.Clean).
func (c *Client) Clean(ctx context.Context, f driver.CleanFilter) (driver.Objects, error) {
	return c.labelled().Clean(ctx, f)
}

// Managed lists the names of the containers, networks and volumes labelled
// lbbench.managed=true, optionally only those of one session.
func (c *Client) Managed(ctx context.Context, session string) (driver.Objects, error) {
	return c.labelled().Managed(ctx, session)
}

// managedFilter selects lbbench's objects, of one session when it is set.
func managedFilter(session string) filters.Args {
	f := filters.NewArgs(filters.Arg("label", driver.LabelManaged+"=true"))
	if session != "" {
		f.Add("label", driver.LabelSession+"="+session)
	}
	return f
}

type containers struct{ c *Client }

var _ driver.Kind = containers{}

func (containers) Name() string { return KindContainers }

func (k containers) List(ctx context.Context, session string) ([]driver.Object, error) {
	cs, err := k.c.api.ContainerList(ctx, container.ListOptions{All: true, Filters: managedFilter(session)})
	if err != nil {
		return nil, err
	}
	out := make([]driver.Object, 0, len(cs))
	for _, ct := range cs {
		name := ct.ID[:12]
		if len(ct.Names) > 0 {
			name = strings.TrimPrefix(ct.Names[0], "/")
		}
		out = append(out, driver.Object{Name: name, ID: ct.ID, Labels: ct.Labels})
	}
	return out, nil
}

func (k containers) Remove(ctx context.Context, o driver.Object) error {
	if err := k.c.removeContainer(ctx, o.ID); err != nil {
		return fmt.Errorf("remove container %s: %w", o.Name, err)
	}
	return nil
}

type networks struct{ c *Client }

var _ driver.Kind = networks{}

func (networks) Name() string { return KindNetworks }

func (k networks) List(ctx context.Context, session string) ([]driver.Object, error) {
	ns, err := k.c.api.NetworkList(ctx, network.ListOptions{Filters: managedFilter(session)})
	if err != nil {
		return nil, err
	}
	out := make([]driver.Object, 0, len(ns))
	for _, n := range ns {
		out = append(out, driver.Object{Name: n.Name, ID: n.ID, Labels: n.Labels})
	}
	return out, nil
}

func (k networks) Remove(ctx context.Context, o driver.Object) error {
	if err := k.c.api.NetworkRemove(ctx, o.ID); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove network %s: %w", o.Name, err)
	}
	return nil
}

type volumes struct{ c *Client }

var _ driver.Kind = volumes{}

func (volumes) Name() string { return KindVolumes }

func (k volumes) List(ctx context.Context, session string) ([]driver.Object, error) {
	vs, err := k.c.api.VolumeList(ctx, volume.ListOptions{Filters: managedFilter(session)})
	if err != nil {
		return nil, err
	}
	out := make([]driver.Object, 0, len(vs.Volumes))
	for _, v := range vs.Volumes {
		out = append(out, driver.Object{Name: v.Name, ID: v.Name, Labels: v.Labels})
	}
	return out, nil
}

func (k volumes) Remove(ctx context.Context, o driver.Object) error {
	if err := k.c.api.VolumeRemove(ctx, o.ID, true); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove volume %s: %w", o.Name, err)
	}
	return nil
}

// removeContainer removes container id, running or not, with its
// anonymous volumes: the one way a run's teardown, a clean and a probe
// remove one. A container already gone, or that another client (an
// lbbench cleaning the same stale session, or a run's own teardown) is
// removing already, is not an error: it is going, as asked.
func (c *Client) removeContainer(ctx context.Context, id string) error {
	err := c.api.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !errdefs.IsNotFound(err) && !removing(err) {
		return err
	}
	return nil
}

// removing reports whether err is the daemon's answer that another client
// (an lbbench cleaning the same stale session, or its own run's teardown)
// is removing the container already: the container is going, as asked.
func removing(err error) bool {
	return errdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress")
}

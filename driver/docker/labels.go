package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/errdefs"

	"github.com/lbbench/lbbench/driver"
)

// Labels on every container, network and volume lbbench creates.
const (
	LabelManaged = "lbbench.managed" // "true"
	LabelSession = "lbbench.session" // one lbbench process's driver
	LabelRun     = "lbbench.run"     // the run (plan) inside the session
	LabelPlan    = "lbbench.plan"    // the run's id in the results
	LabelRole    = "lbbench.role"    // workers, proxy, generator
	// LabelOwner is "host/pid/start" of the lbbench process that created
	// the object: Clean removes objects whose owner is gone.
	LabelOwner = "lbbench.owner"
)

// owner identifies this process in LabelOwner (driver.Owner).
func owner() string { return driver.Owner("/") }

// ownerAlive reports whether the lbbench process named by an owner label
// still runs (driver.OwnerAlive).
func ownerAlive(label string) bool { return driver.OwnerAlive(label, "/") }

// CleanReport lists what Clean removed.
type CleanReport struct {
	Containers, Networks, Volumes []string
}

// Empty reports whether nothing was removed.
func (r CleanReport) Empty() bool {
	return len(r.Containers)+len(r.Networks)+len(r.Volumes) == 0
}

// CleanFilter selects what Clean removes.
type CleanFilter struct {
	// All removes objects whose lbbench process still runs, too.
	All bool
	// Session, when set, limits Clean to one driver's objects.
	Session string
}

// Clean removes the containers (running or not), then the networks and
// volumes, labelled lbbench.managed=true whose owning lbbench process is no
// longer running; with f.All, every one of them, including those of runs in
// progress. It goes on past errors and returns them together.
func (c *Client) Clean(ctx context.Context, f CleanFilter) (CleanReport, error) {
	var rep CleanReport
	var errs []error
	managed := managedFilter(f.Session)
	stale := func(labels map[string]string) bool { return f.All || !ownerAlive(labels[LabelOwner]) }

	cs, err := c.api.ContainerList(ctx, container.ListOptions{All: true, Filters: managed})
	if err != nil {
		return rep, fmt.Errorf("docker: list containers: %w", err)
	}
	for _, ct := range cs {
		if !stale(ct.Labels) {
			continue
		}
		name := ct.ID[:12]
		if len(ct.Names) > 0 {
			name = strings.TrimPrefix(ct.Names[0], "/")
		}
		if err := c.api.ContainerRemove(ctx, ct.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove container %s: %w", name, err))
			continue
		}
		rep.Containers = append(rep.Containers, name)
	}
	ns, err := c.api.NetworkList(ctx, network.ListOptions{Filters: managed})
	if err != nil {
		errs = append(errs, fmt.Errorf("list networks: %w", err))
	}
	for _, n := range ns {
		if !stale(n.Labels) {
			continue
		}
		if err := c.api.NetworkRemove(ctx, n.ID); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
			continue
		}
		rep.Networks = append(rep.Networks, n.Name)
	}
	vs, err := c.api.VolumeList(ctx, volume.ListOptions{Filters: managed})
	if err != nil {
		errs = append(errs, fmt.Errorf("list volumes: %w", err))
	}
	for _, v := range vs.Volumes {
		if !stale(v.Labels) {
			continue
		}
		if err := c.api.VolumeRemove(ctx, v.Name, true); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove volume %s: %w", v.Name, err))
			continue
		}
		rep.Volumes = append(rep.Volumes, v.Name)
	}
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("docker: clean: %w", err)
	}
	return rep, nil
}

// Managed lists the names of the containers, networks and volumes labelled
// lbbench.managed=true, optionally only those of one session.
func (c *Client) Managed(ctx context.Context, session string) (CleanReport, error) {
	f := managedFilter(session)
	var rep CleanReport
	cs, err := c.api.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return rep, err
	}
	for _, ct := range cs {
		rep.Containers = append(rep.Containers, strings.TrimPrefix(ct.Names[0], "/"))
	}
	ns, err := c.api.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return rep, err
	}
	for _, n := range ns {
		rep.Networks = append(rep.Networks, n.Name)
	}
	vs, err := c.api.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return rep, err
	}
	for _, v := range vs.Volumes {
		rep.Volumes = append(rep.Volumes, v.Name)
	}
	return rep, nil
}

// managedFilter selects lbbench's objects, of one session when it is set.
func managedFilter(session string) filters.Args {
	f := filters.NewArgs(filters.Arg("label", LabelManaged+"=true"))
	if session != "" {
		f.Add("label", LabelSession+"="+session)
	}
	return f
}

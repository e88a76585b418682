package docker

import (
	"context"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"

	"github.com/lbbench/lbbench/driver"
)

// ImageFacts are the parts of an image the tests check.
type ImageFacts struct {
	Layers     int
	User       string
	Entrypoint []string
}

func InspectImage(ctx context.Context, c *Client, tag string) (ImageFacts, error) {
	info, err := c.api.ImageInspect(ctx, tag)
	if err != nil {
		return ImageFacts{}, err
	}
	return ImageFacts{Layers: len(info.RootFS.Layers), User: info.Config.User, Entrypoint: info.Config.Entrypoint}, nil
}

func RemoveImage(c *Client, tag string) {
	c.api.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true})
}

// Box is what the tests check of a container.
type Box struct {
	Name, Role, User, Cpuset string
	NanoCPUs                 int64
	ReadOnly, Running        bool
	// Hardening.
	CapDrop, CapAdd, SecurityOpt []string
	Privileged                   bool
	PidsLimit                    *int64
	Memory, MemorySwap           int64
	// Binds are the host directories mounted, by target.
	Binds map[string]string
}

// KillContainer sends SIGKILL to the container named name.
func KillContainer(ctx context.Context, c *Client, name string) error {
	return c.api.ContainerKill(ctx, name, "KILL")
}

func Containers(ctx context.Context, c *Client, session string) ([]Box, error) {
	cs, err := c.api.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", driver.LabelSession+"="+session))})
	if err != nil {
		return nil, err
	}
	var out []Box
	for _, ct := range cs {
		info, err := c.api.ContainerInspect(ctx, ct.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, Box{
			Name:     strings.TrimPrefix(info.Name, "/"),
			Role:     info.Config.Labels[driver.LabelRole],
			User:     info.Config.User,
			Cpuset:   info.HostConfig.CpusetCpus,
			NanoCPUs: info.HostConfig.NanoCPUs,
			ReadOnly: info.HostConfig.ReadonlyRootfs,
			Running:  info.State.Running,

			CapDrop:     info.HostConfig.CapDrop,
			CapAdd:      info.HostConfig.CapAdd,
			SecurityOpt: info.HostConfig.SecurityOpt,
			Privileged:  info.HostConfig.Privileged,
			PidsLimit:   info.HostConfig.PidsLimit,
			Memory:      info.HostConfig.Memory,
			MemorySwap:  info.HostConfig.MemorySwap,
			Binds:       binds(info.Mounts),
		})
	}
	return out, nil
}

// MakeObjects creates, for session, a running container, a network and a
// volume labelled as lbbench's, owned by owner ("" for this process).
func MakeObjects(ctx context.Context, c *Client, img, session, ownerLabel string) error {
	if ownerLabel == "" {
		ownerLabel = owner()
	}
	labels := driver.Labels(session, ownerLabel, "workers")
	labels[driver.LabelRun] = "001"
	name := "lbbench-" + session + "-001"
	if _, err := c.api.NetworkCreate(ctx, name, network.CreateOptions{Internal: true, Labels: labels}); err != nil {
		return err
	}
	if _, err := c.api.VolumeCreate(ctx, volume.CreateOptions{Name: name + "-tmp", Labels: labels}); err != nil {
		return err
	}
	resp, err := c.api.ContainerCreate(ctx, &container.Config{Image: img, Cmd: []string{"idle"}, Labels: labels},
		&container.HostConfig{NetworkMode: container.NetworkMode(name), ReadonlyRootfs: true}, nil, nil, name+"-workers-0")
	if err != nil {
		return err
	}
	return c.api.ContainerStart(ctx, resp.ID, container.StartOptions{})
}

func binds(ms []container.MountPoint) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		if m.Type == "bind" {
			out[m.Destination] = m.Source
		}
	}
	return out
}

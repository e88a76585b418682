package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/errdefs"

	"github.com/lbbench/lbbench/driver"
)

// Image facts.
const (
	// ImageRepo is the repository of lbbench's images; the tag is a content
	// hash of the binary (driver.BinaryTag).
	ImageRepo = "lbbench"
	// ImageBinary is where the binary sits in the image.
	ImageBinary = driver.ImageBinary
	// ImageUser is the unprivileged user the image runs as ("nobody").
	ImageUser = driver.ImageUser
	// LabelImage marks lbbench's images (Clean leaves them: they are a
	// cache, not a leftover).
	LabelImage = driver.LabelImage
)

// dockerfile builds the image from the context's one file. No "# syntax="
// line: the classic builder needs nothing from a registry for FROM scratch.
const dockerfile = `FROM scratch
COPY lbbench ` + ImageBinary + `
USER ` + ImageUser + `
ENTRYPOINT ["` + ImageBinary + `"]
`

// ImageTag returns the tag of the image holding the binary data.
func ImageTag(data []byte) string { return ImageRepo + ":" + driver.BinaryTag(data) }

// CheckStatic returns an error unless the ELF file at path is statically
// linked (driver.CheckStatic).
func CheckStatic(path string) error { return driver.CheckStatic(path) }

// EnsureImage returns the tag of the image holding the lbbench binary at
// exe, building it first unless an image with that tag exists. built says
// whether it built one.
func (c *Client) EnsureImage(ctx context.Context, exe string) (tag string, built bool, err error) {
	if err := CheckStatic(exe); err != nil {
		return "", false, err
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		return "", false, fmt.Errorf("docker: %w", err)
	}
	tag = ImageTag(data)
	if _, err := c.api.ImageInspect(ctx, tag); err == nil {
		return tag, false, nil
	} else if !errdefs.IsNotFound(err) {
		return "", false, fmt.Errorf("docker: inspect image %s: %w", tag, err)
	}
	files := []contextFile{{"Dockerfile", 0o644, []byte(dockerfile)}, {"lbbench", 0o755, data}}
	if err := c.buildImage(ctx, tag, files); err != nil {
		return "", false, err
	}
	if _, err := c.api.ImageInspect(ctx, tag); err != nil {
		return "", false, fmt.Errorf("docker: build image %s: finished, but the image is not there: %w", tag, err)
	}
	return tag, true, nil
}

// contextFile is one file of a build context.
type contextFile struct {
	name string
	mode int64
	data []byte
}

// buildImage builds tag with the classic builder from a context of files,
// one of them the Dockerfile, and labels it as lbbench's.
func (c *Client) buildImage(ctx context.Context, tag string, files []contextFile) error {
	var tarball bytes.Buffer
	tw := tar.NewWriter(&tarball)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	resp, err := c.api.ImageBuild(ctx, &tarball, build.ImageBuildOptions{
		Tags:        []string{tag},
		Dockerfile:  "Dockerfile",
		Remove:      true,
		ForceRemove: true,
		Version:     build.BuilderV1,
		Labels:      map[string]string{LabelImage: "true"},
	})
	if err != nil {
		return fmt.Errorf("docker: build image %s: %w", tag, err)
	}
	defer resp.Body.Close()
	if err := readBuildStream(resp.Body); err != nil {
		return fmt.Errorf("docker: build image %s: %w", tag, err)
	}
	return nil
}

// readBuildStream reads the builder's JSON message stream to its end and
// returns the first error it reports, with the output before it.
func readBuildStream(r io.Reader) error {
	dec := json.NewDecoder(r)
	var log strings.Builder
	for {
		var m struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading the build output: %w", err)
		}
		log.WriteString(m.Stream)
		if m.Error != "" {
			return fmt.Errorf("%s\n%s", m.Error, strings.TrimSpace(log.String()))
		}
	}
}

// RemoveImages removes lbbench's images (labelled lbbench.image=true) that
// no container uses, and returns their tags.
func (c *Client) RemoveImages(ctx context.Context) ([]string, error) {
	imgs, err := c.api.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelImage+"=true"))})
	if err != nil {
		return nil, fmt.Errorf("docker: list images: %w", err)
	}
	var removed []string
	var errs []error
	for _, im := range imgs {
		if im.Containers > 0 {
			continue
		}
		if _, err := c.api.ImageRemove(ctx, im.ID, image.RemoveOptions{Force: false, PruneChildren: true}); err != nil {
			if errdefs.IsConflict(err) { // in use by a container
				continue
			}
			errs = append(errs, err)
			continue
		}
		removed = append(removed, im.RepoTags...)
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("docker: remove images: %w", err)
	}
	return removed, nil
}

package kube

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/internal/files"
)

// DefaultImageRepo is the repository an image is named in when it is
// written to an archive without one: a name no registry answers to, so
// that a node never tries to pull it.
const DefaultImageRepo = "lbbench.local/lbbench"

// Image is lbbench's OCI image: the static binary at driver.ImageBinary
// and nothing else, run as driver.ImageUser.
type Image struct {
	// Ref is where the image is pushed or what an archive names it.
	Ref name.Tag
	img v1.Image
}

// BuildImage builds the image of the static lbbench binary at exe. Its
// entrypoint is the binary; cmd, when not empty, its default arguments (a
// pod sandbox image runs "idle"). repo names the image (DefaultImageRepo
// when empty) and tag its tag (the binary's content hash when empty). The
// build is reproducible: the same binary gives the same digest.
func BuildImage(exe string, cmd []string, repo, tag string) (*Image, error) {
	if err := driver.CheckStatic(exe); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	if repo == "" {
		repo = DefaultImageRepo
	}
	if tag == "" {
		tag = driver.BinaryTag(data)
	}
	ref, err := name.NewTag(repo + ":" + tag)
	if err != nil {
		return nil, fmt.Errorf("image: %q is not an image name: %w", repo+":"+tag, err)
	}
	img, err := rootImage([]driver.RootFile{{Path: driver.ImageBinary, Mode: 0o755, Data: data}}, func(c *v1.Config) {
		c.Entrypoint = []string{driver.ImageBinary}
		c.Cmd = cmd
		c.User = driver.ImageUser
	})
	if err != nil {
		return nil, err
	}
	return &Image{Ref: ref, img: img}, nil
}

// HostEngineImage builds the image of this machine's binary of a proxy
// engine from root (driver.HostEngine), named repo-ENGINE:<content hash>,
// for a cluster's nodes to pull once it is pushed.
func HostEngineImage(root *driver.HostEngineRoot, repo string) (*Image, error) {
	ref, err := name.NewTag(repo + "-" + root.Binary.Engine + ":" + root.Tag)
	if err != nil {
		return nil, fmt.Errorf("image: %q is not an image name: %w", repo+"-"+root.Binary.Engine+":"+root.Tag, err)
	}
	img, err := rootImage(root.Files, func(c *v1.Config) {
		c.Env = []string{"PATH=" + root.PathEnv}
		c.User = driver.ImageUser
	})
	if err != nil {
		return nil, err
	}
	return &Image{Ref: ref, img: img}, nil
}

// rootImage is an OCI image of one layer holding files (their parent
// directories are made), for linux on this machine's architecture,
// labelled as lbbench's, with the configuration set sets.
func rootImage(rootFiles []driver.RootFile, set func(*v1.Config)) (v1.Image, error) {
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	dirs := map[string]bool{}
	for _, f := range rootFiles {
		name := strings.TrimPrefix(f.Path, "/")
		// Parent directories first, each once, so that any tar reader
		// (and the runtime's) sees them as directories.
		parts := strings.Split(name, "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/") + "/"
			if !dirs[d] {
				dirs[d] = true
				if err := tw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, Typeflag: tar.TypeDir, Format: tar.FormatPAX}); err != nil {
					return nil, err
				}
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: f.Mode, Size: int64(len(f.Data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerBytes := layerTar.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	set(&cf.Config)
	cf.Config.Labels = map[string]string{driver.LabelImage: "true"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	return img, nil
}

// Digest is the image's manifest digest.
func (i *Image) Digest() (string, error) {
	d, err := i.img.Digest()
	return d.String(), err
}

// WriteArchive writes the image to path as an image archive (the layout
// "docker save" writes), which "ctr images import" and "docker load" read.
// A regular file appears whole or not at all (package files).
func (i *Image) WriteArchive(path string) error {
	f, err := files.Create(path)
	if err != nil {
		return fmt.Errorf("image: %w", err)
	}
	defer f.Close()
	if err := tarball.Write(i.Ref, i.img, f); err != nil {
		return fmt.Errorf("image: write %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("image: write %s: %w", path, err)
	}
	return nil
}

// Push pushes the image to its registry with the credentials of the
// default keychain (docker login's config). A registry on localhost or
// 127.0.0.1 is spoken to over plain HTTP.
func (i *Image) Push() error {
	if err := remote.Write(i.Ref, i.img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("image: push %s: %w", i.Ref, err)
	}
	return nil
}

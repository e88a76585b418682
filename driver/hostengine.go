package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/lbbench/lbbench/engines"
)

// HostEngineImage, as the image of an engine (--engine-image nginx=host),
// asks a container driver for an image built FROM scratch from this
// machine's own binary of the engine and the shared libraries it loads
// (HostEngine). The docker driver builds it into the daemon; the
// kubernetes driver pushes it to --image-repo.
const HostEngineImage = "host"

// RootFile is one regular file of an image's root file system.
type RootFile struct {
	// Path is absolute.
	Path string
	Mode int64
	Data []byte
}

// HostEngineRoot is the file tree of an image that runs this machine's
// binary of a proxy engine, with nothing else in it.
type HostEngineRoot struct {
	// Binary is the engine as found on this machine; its path is the same
	// in the image.
	Binary engines.Binary
	// Files are the binary, the shared libraries ldd lists for it, and an
	// /etc/passwd and /etc/group naming root and nobody.
	Files []RootFile
	// Tag is the first 16 hex digits of the SHA-256 of the files' paths
	// and contents: the same machine gives the same tag.
	Tag string
	// PathEnv is the image's PATH, the binary's directory first.
	PathEnv string
}

var lddPath = regexp.MustCompile(`(?m)(?:=>\s*)?(/\S+)\s+\(0x`)

// HostEngine collects the root of an image for this machine's binary of
// engine (nginx, haproxy). It is how a machine with no registry to pull
// from runs the real engines in containers.
func HostEngine(ctx context.Context, engine string) (*HostEngineRoot, error) {
	bin, err := engines.Find(ctx, engine)
	if err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, "ldd", bin.Path).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("image: ldd %s: %w: %s", bin.Path, err, out)
	}
	paths := []string{bin.Path}
	for _, m := range lddPath.FindAllStringSubmatch(string(out), -1) {
		if !slices.Contains(paths, m[1]) {
			paths = append(paths, m[1])
		}
	}
	r := &HostEngineRoot{
		Binary: bin,
		Files: []RootFile{
			{"/etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n")},
			{"/etc/group", 0o644, []byte("root:x:0:\nnogroup:x:65534:\n")},
		},
		PathEnv: filepath.Dir(bin.Path) + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	}
	sum := sha256.New()
	for _, p := range paths {
		data, err := os.ReadFile(p) // follows symlinks: the file itself
		if err != nil {
			return nil, fmt.Errorf("image: %s image: %w", engine, err)
		}
		r.Files = append(r.Files, RootFile{p, 0o755, data})
		sum.Write([]byte(p))
		sum.Write(data)
	}
	r.Tag = hex.EncodeToString(sum.Sum(nil)[:8])
	return r, nil
}

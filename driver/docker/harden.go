package docker

import (
	"fmt"
	"os"
	"strconv"

	"github.com/docker/docker/api/types/container"
)

// Default limits of every container the driver creates (see WithLimits).
const (
	// DefaultPidsLimit bounds the processes and threads of one container:
	// far above what a worker set, a proxy or the generator uses (a few
	// hundred threads), far below what a fork bomb would take.
	DefaultPidsLimit = 4096
	// DefaultMemory bounds one container's memory: the generator, the
	// largest, stays well under it below saturation.
	DefaultMemory = 2 << 30
)

// Limits are the per-container resource limits.
type Limits struct {
	// Pids is the most processes and threads one container may have.
	Pids int64
	// Memory is the most bytes of memory one container may use.
	Memory int64
}

// WithLimits overrides DefaultPidsLimit and DefaultMemory; a zero field
// keeps its default.
func WithLimits(l Limits) Option {
	return func(c *config) { c.limits = l }
}

// Minimums accepted by WithLimits: below them no lbbench process starts.
const minPids, minMemory = 16, 32 << 20

func (l Limits) withDefaults() (Limits, error) {
	if l.Pids == 0 {
		l.Pids = DefaultPidsLimit
	}
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	if l.Pids < minPids {
		return l, fmt.Errorf("docker: pids limit %d is below the minimum %d", l.Pids, minPids)
	}
	if l.Memory < minMemory {
		return l, fmt.Errorf("docker: memory limit %d bytes is below the minimum %d (32 MiB)", l.Memory, int64(minMemory))
	}
	return l, nil
}

// containerUser is the user every container runs as: the image's
// unprivileged user when lbbench runs as root (it then hands each run's
// directory to that user, see ownDir), otherwise lbbench's own user and
// group, which own the directories it makes. Never root.
func containerUser() string {
	if os.Geteuid() == 0 {
		return ImageUser
	}
	return strconv.Itoa(os.Geteuid()) + ":" + strconv.Itoa(os.Getegid())
}

// harden applies what every container gets: no capability at all, no
// privilege gained through setuid binaries, a read-only root, and the
// driver's pids and memory limits (swap included, so the memory limit is
// one).
func (d *Driver) harden(hc *container.HostConfig) {
	hc.CapDrop = []string{"ALL"}
	hc.CapAdd = nil
	hc.Privileged = false
	hc.SecurityOpt = append(hc.SecurityOpt, "no-new-privileges:true")
	hc.ReadonlyRootfs = true
	pids := d.limits.Pids
	hc.PidsLimit = &pids
	hc.Memory = d.limits.Memory
	hc.MemorySwap = d.limits.Memory
}

// ownDir gives dir, a directory this process just made, to the
// containers' user: as root, by ownership (never by mode 0777: nobody else
// may write there); otherwise it is this process's own already. Lchown
// does not follow a symbolic link.
func ownDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if os.Geteuid() != 0 {
		return os.Chmod(dir, 0o755)
	}
	if err := os.Lchown(dir, imageUID, imageGID); err != nil {
		return err
	}
	return os.Chmod(dir, 0o755)
}

// imageUID and imageGID are ImageUser's.
const imageUID, imageGID = 65534, 65534

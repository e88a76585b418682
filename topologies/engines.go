package topologies

import (
	"context"
	"os"
	"os/user"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/scenario"
)

// EngineFinder is an Allocator that supplies the proxy engines' binaries
// itself: the docker driver runs nginx and HAProxy from images, not from
// this machine. Binary.Path is then what the driver runs (a name on the
// image's PATH).
type EngineFinder interface {
	FindEngine(ctx context.Context, engine string) (engines.Binary, error)
}

// EngineProcess is the proxy process of spec p run by nginx or HAProxy
// (p.Engine) in front of the upstreams ups ("host:port" or "unix:/path"),
// serving on listen with its health and status on admin. It runs the engine
// under "lbbench guard", checks its configuration first (Check) and
// reads its counters by StatsNginx or StatsHAProxy. It finds the engine's
// binary (engines.Find remembers it, and harness.Run has already looked it
// up, so this runs no command in a scenario); a missing engine is an error
// that says how to install it.
// With a non-nil finder the binary comes from it instead of this machine.
func EngineProcess(p scenario.ProxySpec, ups []string, listen, admin string, finder EngineFinder) (Process, error) {
	find := engines.Find
	if finder != nil {
		find = finder.FindEngine
	}
	bin, err := find(context.Background(), p.Engine)
	if err != nil {
		return Process{}, err
	}
	cfg, err := engines.Render(engines.Spec{
		Engine:            p.Engine,
		Policy:            p.Policy,
		UpstreamKeepAlive: p.KeepAliveOn(),
		Upstreams:         ups,
		Listen:            listen,
		Admin:             admin,
		User:              rootUser(),
		StubStatus:        bin.StubStatus,
		Threads:           p.Threads,
	})
	if err != nil {
		return Process{}, err
	}
	proc := Process{
		Role:   RoleProxy,
		Engine: &EngineCommand{Engine: p.Engine, Path: bin.Path, Args: cfg.Args, Check: cfg.CheckArgs},
		Health: cfg.Health,
		Stats:  cfg.Stats,
	}
	for _, f := range cfg.Files {
		proc.Files = append(proc.Files, File{Name: f.Name, Content: f.Content})
	}
	if cfg.Stats != "" {
		proc.StatsKind = map[string]string{engines.Nginx: StatsNginx, engines.HAProxy: StatsHAProxy}[p.Engine]
	}
	return proc, nil
}

// rootUser is the account nginx's worker processes should run as: the
// current user when lbbench runs as root (nginx would otherwise switch to
// "nobody", which cannot reach the run's private directories), and none
// otherwise (nginx ignores "user" then, with a warning).
func rootUser() string {
	if os.Geteuid() != 0 {
		return ""
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

package driver

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/lbbench/lbbench/engines"
)

// ResolveEngine makes sure the image a proxy engine runs from is usable
// (built, pushed or pulled as its driver does it) and returns its final
// reference and the engine's binary in it (EngineVersionIn).
type ResolveEngine func(ctx context.Context, engine, image string) (ref string, b engines.Binary, err error)

// EngineImages is a container driver's topologies.EngineFinder: each
// proxy engine runs from an image the user names, which is resolved and
// asked for its version once, then remembered. It is safe for concurrent
// use; a Find waits for another in progress.
type EngineImages struct {
	driver  string
	named   map[string]string
	missing func(engine string) error
	resolve ResolveEngine

	mu   sync.Mutex
	bins map[string]engines.Binary // engine -> binary found
	refs map[string]string         // engine -> image reference
}

// NewEngineImages returns the engine finder of driver (the prefix of its
// errors) for the images named (engine -> image): missing says what to do
// when an engine has none, resolve makes an image usable.
func NewEngineImages(driver string, named map[string]string, missing func(engine string) error, resolve ResolveEngine) *EngineImages {
	return &EngineImages{driver: driver, named: maps.Clone(named), missing: missing, resolve: resolve,
		bins: map[string]engines.Binary{}, refs: map[string]string{}}
}

// Find implements topologies.EngineFinder: the engine's binary in its
// image, whose version ends in " (image REF)".
func (e *EngineImages) Find(ctx context.Context, engine string) (engines.Binary, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.bins[engine]; ok {
		return b, nil
	}
	if engines.VersionArg(engine) == "" {
		return engines.Binary{}, fmt.Errorf("%s: unknown proxy engine %q (known: %v)", e.driver, engine, engines.Names())
	}
	img, ok := e.named[engine]
	if !ok {
		return engines.Binary{}, e.missing(engine)
	}
	ref, b, err := e.resolve(ctx, engine, img)
	if err != nil {
		return engines.Binary{}, err
	}
	b.Version += " (image " + ref + ")"
	e.bins[engine] = b
	e.refs[engine] = ref
	return b, nil
}

// Image returns the reference of the image engine runs from, once Find
// has resolved it.
func (e *EngineImages) Image(engine string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ref, ok := e.refs[engine]
	if !ok {
		return "", fmt.Errorf("%s: no image for proxy engine %s (--engine-image %s=IMAGE)", e.driver, engine, engine)
	}
	return ref, nil
}

// EngineVersionIn runs engine's version command (engines.VersionArg) in
// image with run, which returns its output and exit status, and parses
// the version. driver prefixes the errors.
func EngineVersionIn(ctx context.Context, driver, engine, image string, run func(ctx context.Context, argv []string) (string, int, error)) (engines.Binary, error) {
	out, code, err := run(ctx, []string{engine, engines.VersionArg(engine)})
	if err != nil {
		return engines.Binary{}, err
	}
	if code != 0 {
		return engines.Binary{}, fmt.Errorf("%s: %s %s in image %s: exit status %d: %s", driver, engine, engines.VersionArg(engine), image, code, strings.TrimSpace(out))
	}
	b, err := engines.ParseVersion(engine, engine, []byte(out))
	if err != nil {
		return engines.Binary{}, fmt.Errorf("%s: image %s: %w", driver, image, err)
	}
	return b, nil
}

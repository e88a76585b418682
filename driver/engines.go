package driver

import (
	"context"
	"fmt"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/scenario"
)

// FindEngine finds a proxy engine's binary where a driver runs it: this
// machine's (engines.Find) for the local driver, the engine's image for
// the docker driver.
type FindEngine func(ctx context.Context, engine string) (engines.Binary, error)

// EngineVersions finds every proxy engine s's variants use with find and
// returns their versions, for the results' environment. A missing engine
// is an error naming the variant, with find's word on how to get it.
func EngineVersions(ctx context.Context, s scenario.Scenario, find FindEngine) (map[string]string, error) {
	var out map[string]string
	for i, v := range s.Variants {
		if (v.Topology != scenario.Proxy && v.Topology != scenario.Unix) || v.Proxy.Engine == scenario.Builtin {
			continue
		}
		b, err := find(ctx, v.Proxy.Engine)
		if err != nil {
			return nil, fmt.Errorf("driver: variants[%d] (%s): %w", i, v.Name, err)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[b.Engine] = b.Version
	}
	return out, nil
}

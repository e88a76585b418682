package harness

import (
	"context"
	"fmt"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
)

// engineVersions finds every proxy engine s's variants use, where d runs
// them (this machine, or a driver's topologies.EngineFinder), and returns
// their versions. A missing engine is an error that says how to get it.
func engineVersions(ctx context.Context, s scenario.Scenario, d Driver) (map[string]string, error) {
	find := engines.Find
	if f, ok := d.(topologies.EngineFinder); ok {
		find = f.FindEngine
	}
	var out map[string]string
	for i, v := range s.Variants {
		if (v.Topology != scenario.Proxy && v.Topology != scenario.Unix) || v.Proxy.Engine == scenario.Builtin {
			continue
		}
		b, err := find(ctx, v.Proxy.Engine)
		if err != nil {
			return nil, fmt.Errorf("harness: variants[%d] (%s): %w", i, v.Name, err)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[b.Engine] = b.Version
	}
	return out, nil
}

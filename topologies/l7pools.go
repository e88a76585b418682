package topologies

import "github.com/lbbench/lbbench/scenario"

func init() { renderers[scenario.L7Pools] = renderL7Pools }

// renderL7Pools: one "lbbench serve" with worker i on port base+i, and the
// built-in layer-7 proxy with one --pool per pool.
func renderL7Pools(v scenario.Variant, w scenario.Workers, a *alloc) (Plan, error) {
	return renderBalancer(v, w, a, "l7")
}

package topologies

import "github.com/lbbench/lbbench/scenario"

func init() { renderers[scenario.L4] = renderL4 }

// renderL4: one "lbbench serve" with worker i on port base+i, and the
// built-in proxy in layer-4 mode listing those ports.
func renderL4(v scenario.Variant, w scenario.Workers, a *alloc) (Plan, error) {
	return renderBalancer(v, w, a, "l4")
}

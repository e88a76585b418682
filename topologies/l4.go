package topologies

// L4 gives each worker its own port behind the built-in proxy in layer-4
// mode: it picks a worker once per client TCP connection, then copies
// bytes both ways, so every request of a keep-alive connection goes to the
// same worker.
const L4 = "l4"

func init() { renderers[L4] = renderL4 }

// renderL4: one "lbbench serve" with worker i on port base+i, and the
// built-in proxy in layer-4 mode listing those ports.
func renderL4(v Variant, w Workers, a *alloc) (Plan, error) {
	return renderBalancer(v, w, a, "l4")
}

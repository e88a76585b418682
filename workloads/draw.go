package workloads

import "time"

// Draw returns the next request's class index and service time without
// building a target: the same draws from the same random sequence as
// Target, so a Targeter used only through Draw yields exactly the classes
// and service times a real run with the same spec asks for. The simulator
// in package model uses it. Draw and Target share the sequence; it is safe
// for concurrent use and does not allocate.
func (t *Targeter) Draw() (class int, service time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	x := t.rng.Float64() * t.cum[len(t.cum)-1]
	for class < len(t.cum)-1 && x >= t.cum[class] {
		class++
	}
	return class, t.classes[class].Service.draw(t.rng)
}

package driver

import "sync"

// The ports a driver whose every run has a network namespace of its own
// (a container network, a pod) hands out: any port of the range is free
// there, so a counter keeps one plan's ports distinct.
const (
	FirstPort = 20000
	LastPort  = 60000
)

// PortCounter hands out ports of [FirstPort, LastPort) in turn, starting
// over at FirstPort when a request would pass LastPort. Its zero value
// starts at FirstPort. It is safe for concurrent use.
type PortCounter struct {
	mu   sync.Mutex
	next int
}

// Ports implements topologies.Allocator's Ports: the first of n
// consecutive ports.
func (c *PortCounter) Ports(n int) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == 0 || c.next+n > LastPort {
		c.next = FirstPort
	}
	p := c.next
	c.next += n
	return p, nil
}

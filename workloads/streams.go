package workloads

// streamSeedStep separates the seeds of a workload's streams: stream i
// (from 0) of a workload with named clients is seeded Seed+(i+1)·step.
const streamSeedStep = 0x9e3779b9

// Stream is one open-loop request stream of a workload: its own schedule,
// class draws and connections. The generator (package harness) and the
// simulator (package model) both split a workload with Spec.Streams, so the
// simulated streams are the generated ones.
type Stream struct {
	// Name is the named client the stream carries, or "" for the single
	// stream of a workload without named clients.
	Name string
	// Share is the client's share as written in the workload (relative to
	// the other clients' shares), or 1 for the single stream.
	Share float64
	// Spec is the workload as this stream offers it: the arrival scaled to
	// the stream's fraction of the load, a seed of its own, and Clients
	// reduced to the stream's own connections (Clients.Connections is the
	// stream's cap, Clients.Named is empty; keep-alive and requests per
	// connection are the workload's).
	Spec Spec
}

// Streams splits s into its open-loop streams: s itself when it has no
// named clients, else one stream per named client, in order, each offering
// the client's fraction of the load (Arrival.Scaled by its share over the
// sum of the shares) from a seed derived from s.Seed and its position. Call
// it on the result of WithDefaults; it returns a new slice each time.
func (s Spec) Streams() []Stream {
	named := s.Clients.Named
	if len(named) == 0 {
		return []Stream{{Share: 1, Spec: s}}
	}
	var total float64
	for _, n := range named {
		total += n.Share
	}
	out := make([]Stream, len(named))
	for i, n := range named {
		ss := s
		ss.Arrival = s.Arrival.Scaled(n.Share / total)
		ss.Seed = s.Seed + uint64(i+1)*streamSeedStep
		ss.Clients.Connections = n.Connections
		ss.Clients.Named = nil
		out[i] = Stream{Name: n.Name, Share: n.Share, Spec: ss}
	}
	return out
}

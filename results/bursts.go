package results

import "fmt"

// Bursts is what a burst workload (workloads.Bursts) recorded: for each
// burst of Size simultaneous new connections, how many landed on each
// worker (by the X-Worker header of their responses).
type Bursts struct {
	// Size is the number of connections per burst; Workers the number of
	// workers the loads are counted over.
	Size    int `json:"size"`
	Workers int `json:"workers"`
	// Loads has one entry per burst: the number of the burst's requests
	// each worker answered, indexed by worker. Requests that failed or
	// named no worker are in Unattributed.
	Loads [][]int `json:"loads"`
	// Unattributed counts, per burst, the requests no worker answered.
	Unattributed []int `json:"unattributed"`
	// Late counts, per burst, the requests the generator finished writing
	// only after the burst's first answer had come back, or a whole
	// service time (the shortest its classes can draw) after the burst's
	// first request, or that their worker received only after another
	// worker was done with one of the burst's (workers' stamps,
	// workloads.TimesHeader): such a burst did not arrive together (the
	// generator, or the balancer, was held up), so its loads say nothing
	// of how simultaneous requests are dispatched. Omitted in files written before it was recorded (no
	// burst is known late).
	Late []int `json:"late,omitempty"`
}

// LateAt says whether burst i arrived apart (see Late).
func (b *Bursts) LateAt(i int) bool { return i < len(b.Late) && b.Late[i] > 0 }

// MaxLoads returns the largest load of each fully attributed burst that
// arrived together, and how many bursts were left out: those with an
// unattributed request (their largest load is unknown) as unanswered, and
// those with a late request (see Late) as late.
func (b *Bursts) MaxLoads() (maxes []int, unanswered, late int) {
	for i, l := range b.Loads {
		if i < len(b.Unattributed) && b.Unattributed[i] > 0 {
			unanswered++
			continue
		}
		if b.LateAt(i) {
			late++
			continue
		}
		m := 0
		for _, n := range l {
			m = max(m, n)
		}
		maxes = append(maxes, m)
	}
	return maxes, unanswered, late
}

// MaxLoadCounts returns how many fully attributed bursts had each largest
// load k, for k = 0..Size.
func (b *Bursts) MaxLoadCounts() []int {
	counts := make([]int, b.Size+1)
	maxes, _, _ := b.MaxLoads()
	for _, m := range maxes {
		if m >= 0 && m <= b.Size {
			counts[m]++
		}
	}
	return counts
}

// merge appends o's bursts to b's.
func (b *Bursts) merge(o *Bursts) error {
	if b.Size != o.Size || b.Workers != o.Workers {
		return fmt.Errorf("results: merge: bursts of %d over %d workers into bursts of %d over %d", o.Size, o.Workers, b.Size, b.Workers)
	}
	if len(b.Late) > 0 || len(o.Late) > 0 {
		b.Late = append(b.Late, make([]int, max(0, len(b.Loads)-len(b.Late)))...)
		b.Late = append(b.Late, o.Late...)
		b.Late = append(b.Late, make([]int, max(0, len(o.Loads)-len(o.Late)))...)
	}
	b.Loads = append(b.Loads, o.Loads...)
	b.Unattributed = append(b.Unattributed, o.Unattributed...)
	return nil
}

// Fit pads each burst's loads to workers entries (a worker that answered
// none of a burst's requests has none), or fails when a response named a
// worker beyond them. It sets Workers. A nil b fits.
func (b *Bursts) Fit(workers int) error {
	if b == nil {
		return nil
	}
	b.Workers = workers
	for i, l := range b.Loads {
		if len(l) > workers {
			return fmt.Errorf("results: burst %d: a response named worker %d, but there are %d workers", i, len(l)-1, workers)
		}
		for len(l) < workers {
			l = append(l, 0)
		}
		b.Loads[i] = l
	}
	return nil
}

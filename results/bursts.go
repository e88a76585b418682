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
}

// MaxLoads returns the largest load of each fully attributed burst (bursts
// with an unattributed request are left out: their largest load is
// unknown) and how many bursts were left out.
func (b *Bursts) MaxLoads() (maxes []int, skipped int) {
	for i, l := range b.Loads {
		if i < len(b.Unattributed) && b.Unattributed[i] > 0 {
			skipped++
			continue
		}
		m := 0
		for _, n := range l {
			m = max(m, n)
		}
		maxes = append(maxes, m)
	}
	return maxes, skipped
}

// MaxLoadCounts returns how many fully attributed bursts had each largest
// load k, for k = 0..Size.
func (b *Bursts) MaxLoadCounts() []int {
	counts := make([]int, b.Size+1)
	maxes, _ := b.MaxLoads()
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

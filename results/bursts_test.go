package results

import (
	"slices"
	"testing"
)

// TestBurstsLeftOut: a burst's largest load counts only when every one of
// its requests was answered and none was late; merging keeps each burst's
// late count beside its loads, with files written before Late was recorded
// counting none.
func TestBurstsLeftOut(t *testing.T) {
	b := &Bursts{Size: 4, Workers: 2,
		Loads:        [][]int{{2, 2}, {3, 1}, {3, 0}, {4, 0}},
		Unattributed: []int{0, 0, 1, 0},
		Late:         []int{0, 0, 0, 2},
	}
	maxes, unanswered, late := b.MaxLoads()
	if !slices.Equal(maxes, []int{2, 3}) || unanswered != 1 || late != 1 {
		t.Errorf("MaxLoads = %v, %d unanswered, %d late; want [2 3], 1, 1", maxes, unanswered, late)
	}
	if got := b.MaxLoadCounts(); !slices.Equal(got, []int{0, 0, 1, 1, 0}) {
		t.Errorf("MaxLoadCounts = %v", got)
	}

	old := &Bursts{Size: 4, Workers: 2, Loads: [][]int{{4, 0}}, Unattributed: []int{0}}
	if _, _, late := old.MaxLoads(); late != 0 {
		t.Errorf("a file without late counts: %d late", late)
	}
	if err := old.merge(b); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(old.Late, []int{0, 0, 0, 0, 2}) || len(old.Loads) != 5 {
		t.Errorf("merged late %v over %d bursts, want [0 0 0 0 2] over 5", old.Late, len(old.Loads))
	}
	if err := b.merge(&Bursts{Size: 4, Workers: 2, Loads: [][]int{{4, 0}}, Unattributed: []int{0}}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Late, []int{0, 0, 0, 2, 0}) {
		t.Errorf("merged late %v, want [0 0 0 2 0]", b.Late)
	}
}

package results

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/workloads"
)

// Limits on what a results file may hold, checked on a first pass over
// the file that decodes no histogram, so that a file cannot make a reader
// allocate far more than lbbench writes. They are the scenario's own
// limits where there is one.
const (
	// MaxHistograms bounds the histograms decoded when a results file is
	// read (each takes about 190 KB however short its encoding): about
	// 1.5 GiB at most. Interval histograms are decoded only when used
	// and count apart (MaxIntervals). A scenario of 1000 runs of the
	// default workload holds about 6000.
	MaxHistograms = 8192
	// MaxRunIntervals bounds one run's interval histograms: a run lasts
	// at most workloads.MaxRunTime, one interval per IntervalLength.
	MaxRunIntervals = int(workloads.MaxRunTime/IntervalLength) + 1
	// MaxIntervals bounds a results file's interval histograms: a
	// scenario lasts at most scenario.MaxScenarioTime.
	MaxIntervals = int(scenario.MaxScenarioTime / IntervalLength)
	// MaxRuns bounds a results file's runs: every variant repeated the
	// most a scenario may ask, twice (a paired comparison's baseline
	// runs).
	MaxRuns = 2 * scenario.MaxVariants * scenario.MaxRepeat
)

// histogramPrefix begins every histogram in a results file, as JSON: the
// opening quote and the base64 of the V2 compressed cookie. Histogram's
// decoder refuses any other spelling (an escaped one), so counting it
// counts every histogram the file can make a reader decode.
var histogramPrefix = []byte(`"HISTF`)

// skip decodes any JSON value into nothing: it counts elements.
type skip struct{}

func (*skip) UnmarshalJSON([]byte) error { return nil }

// shape is what checkShape reads of a results file.
type shape struct {
	Schema   *json.RawMessage `json:"schema"`
	Scenario struct {
		Variants []skip `json:"variants"`
		Workload struct {
			Classes []skip `json:"classes"`
		} `json:"workload"`
	} `json:"scenario"`
	Runs []struct {
		ID      string `json:"id"`
		Classes []struct {
			Name string `json:"name"`
		} `json:"classes"`
		Intervals []skip         `json:"intervals"`
		ByWorker  map[string]any `json:"by_worker"`
	} `json:"runs"`
}

// checkShape refuses a results file over the limits above, or with two
// runs of one ID (each run's exports are named by its ID) or two classes
// of one name in a run, before anything in it is decoded for use.
func checkShape(data []byte) error {
	var sh shape
	if err := json.Unmarshal(data, &sh); err != nil {
		return err
	}
	if sh.Schema == nil && !bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return fmt.Errorf("has no \"schema\" field: not an lbbench results file (lbbench writes \"schema\": %d; give the results.json of a run, or its directory)", SchemaVersion)
	}
	if n := len(sh.Scenario.Variants); n > scenario.MaxVariants {
		return fmt.Errorf("its scenario has %d variants; a scenario has at most %d", n, scenario.MaxVariants)
	}
	if n := len(sh.Scenario.Workload.Classes); n > workloads.MaxClasses {
		return fmt.Errorf("its workload has %d classes; a workload has at most %d", n, workloads.MaxClasses)
	}
	if n := len(sh.Runs); n > MaxRuns {
		return fmt.Errorf("holds %d runs; a scenario makes at most %d", n, MaxRuns)
	}
	ids := make(map[string]int, len(sh.Runs))
	intervals := 0
	for i, r := range sh.Runs {
		if j, dup := ids[r.ID]; dup {
			return fmt.Errorf("runs[%d] and runs[%d] are both run %q: a run ID names one run (and its exports)", j, i, r.ID)
		}
		ids[r.ID] = i
		if n := len(r.Classes); n > workloads.MaxClasses {
			return fmt.Errorf("runs[%d] (%s) has %d classes; a workload has at most %d", i, r.ID, n, workloads.MaxClasses)
		}
		names := make(map[string]bool, len(r.Classes))
		for _, c := range r.Classes {
			if names[c.Name] {
				return fmt.Errorf("runs[%d] (%s) has two classes named %q", i, r.ID, c.Name)
			}
			names[c.Name] = true
		}
		if n := len(r.ByWorker); n > scenario.MaxWorkers {
			return fmt.Errorf("runs[%d] (%s) counts responses of %d workers; a scenario has at most %d", i, r.ID, n, scenario.MaxWorkers)
		}
		if n := len(r.Intervals); n > MaxRunIntervals {
			return fmt.Errorf("runs[%d] (%s) has %d intervals; a run of at most %s has at most %d", i, r.ID, n, workloads.MaxRunTime, MaxRunIntervals)
		}
		intervals += len(r.Intervals)
	}
	if intervals > MaxIntervals {
		return fmt.Errorf("holds %d intervals; a scenario of at most %s has at most %d", intervals, scenario.MaxScenarioTime, MaxIntervals)
	}
	if n := bytes.Count(data, histogramPrefix) - intervals; n > MaxHistograms {
		return fmt.Errorf("holds %d histograms besides its intervals; lbbench reads at most %d (about 1.5 GiB decoded)", n, MaxHistograms)
	}
	return nil
}

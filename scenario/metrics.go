package scenario

// Metric kinds of a claim's terms.
const (
	// KindStat metrics vary from run to run and are judged statistically:
	// latency percentiles, throughput, error rate, skew.
	KindStat = "statistical"
	// KindExact metrics are counts, judged exactly on every run.
	KindExact = "exact"
	// KindModel metrics are compared with `lbbench model balls`.
	KindModel = "model"
)

// Arguments a metric takes after the variant.
const (
	// ArgIndex is an integer: worker(v, 3), pmax(v, 4).
	ArgIndex = "index"
	// ArgName is a name: class(v, short), pool(v, write).
	ArgName = "name"
	// ArgDuration is a positive duration: slow(v, 20ms).
	ArgDuration = "duration"
)

// MetricDef is what the scenario language knows of a metric: its name in
// claims and tolerances, its kind, the argument it takes and what it is.
// The metrics themselves, with how each is read from a run, are defined
// once in package results (results.Metrics) and reach scenario validation
// through the Catalog (Catalog.Metrics), as the policies do.
type MetricDef struct {
	Name string
	// Kind is KindStat, KindExact or KindModel.
	Kind string
	// Arg names the second argument the metric takes: "", ArgIndex or
	// ArgName.
	Arg string
	// Choices, when set, are the only values the second argument may
	// take (the roles of a CPU metric).
	Choices []string `json:"choices,omitempty"`
	// Help says what the metric is.
	Help string
}

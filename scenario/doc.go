// Package scenario reads scenario files: the variants to compare, the
// workers they run, the workload offered to them and how often each is
// repeated. Load and Parse decode, fill defaults and validate every field
// and cross-reference before anything starts; a problem is a *FieldError
// naming the file, the line and the field's dotted yaml path.
//
// The package runs nothing: harness runs a Scenario, topologies render its
// variants, and results records it beside what was measured.
package scenario

// Package reports turns results into what people and tools read: summaries
// per variant (histograms merged across runs, never percentiles averaged)
// and a terminal table. It does not reach the network.
package reports

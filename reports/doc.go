// Package reports turns results into what people and tools read: summaries
// per variant (histograms merged across runs, never percentiles averaged),
// a terminal table, a self-contained HTML report (inline CSS and SVG, no
// script, no external URL), a markdown summary for CI, a CSV summary,
// HdrHistogram percentile distributions (.hgrm) and interval logs (.hlog),
// JUnit XML for verdicts, and a static site indexing many runs. It does
// not reach the network.
package reports

// Package stats holds the statistics behind lbbench's verdicts and claims:
// numbers in, numbers out. Rank tests (Mann-Whitney U, Kolmogorov-Smirnov,
// exact for the small samples runs give), intervals (Hodges-Lehmann shift,
// percentile bootstrap of medians, Wilson's for a proportion), Holm's
// correction for a family of tests. It imports nothing of lbbench
// (internal/archtest), so that its tests are the whole story of each
// method.
package stats

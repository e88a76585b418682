// Package archtest holds no code: its tests check lbbench's import rules
// (README, "Layout"), so that the layers stay as they are drawn, and its
// call rules (calls_test.go): package reports calls no judging function
// of compare or claims, only the few it is allowed, and every function
// that summarises or judges a report is called from one builder in job
// (job.Report computes each report once; docs/architecture.md, "Compute
// once, render many").
package archtest

// Package worker implements the HTTP worker (backend replica) that
// benchmarks send load to.
//
// A Worker serves at most Config.Concurrency requests at a time; further
// requests wait for a slot, first come first served, which is what makes a
// single-task worker (concurrency 1) build a queue when a load balancer
// sends it more than it can take. Each request's service time comes
// from its query (us=<microseconds> or ms=<milliseconds>) or from
// Config.Service, and is spent either sleeping or spinning on a CPU
// (Config.Mode).
//
// Routes, on every listener: /healthz answers 200 at once without taking a
// slot, /stats answers the Stats as JSON, and every other path does the
// work. Every response carries the header X-Worker with the worker's index.
package worker

package model

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// queueScenario is an open Poisson stream of rate λ into `workers` workers
// of `slots` slots each, with exponential service times of mean `mean`:
// the M/M/c family. The measured window holds about n requests after a
// warm-up of about n/50.
func queueScenario(t *testing.T, workers, slots int, rate float64, mean time.Duration, n int, variants ...scenario.Variant) scenario.Scenario {
	t.Helper()
	dur := time.Duration(float64(n) / rate * float64(time.Second))
	s := scenario.Scenario{
		Name:    "queue",
		Workers: scenario.Workers{Count: workers, Concurrency: slots},
		Workload: workloads.Spec{
			Arrival:  workloads.Arrival{Kind: workloads.Poisson, RatePerSec: workloads.Rate(rate)},
			Duration: dur,
			Warmup:   dur / 50,
			Classes:  []workloads.Class{{Name: "exp", Weight: 1, Service: workloads.Service{Dist: workloads.Exp, Mean: mean}}},
			// Enough connections that a request never waits for one.
			Clients: workloads.Clients{Connections: 4096},
			Timeout: time.Hour,
			Seed:    7,
		},
		Variants: variants,
		Repeat:   1,
	}.WithDefaults()
	if err := s.Validate(topologies.Catalog()); err != nil {
		t.Fatal(err)
	}
	return s
}

func proxyVariant(policy string) scenario.Variant {
	return scenario.Variant{Name: policy, Topology: scenario.Proxy, Proxy: scenario.ProxySpec{Policy: policy}}.WithDefaults()
}

var reusePort = scenario.Variant{Name: "reuseport", Topology: scenario.ReusePort}

// simulate runs variant v of s once and returns its exact means.
func simulate(t *testing.T, s scenario.Scenario, v scenario.Variant) Stats {
	t.Helper()
	_, st, err := SimulateRun(context.Background(), s.Workers, v, s.WorkloadFor(v, 1))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// within fails unless got is within tol (relative) of want.
func within(t *testing.T, what string, got, want time.Duration, tol float64) {
	t.Helper()
	rel := math.Abs(float64(got-want)) / float64(want)
	t.Logf("%s: simulated %v, theory %v (%.2f%% off)", what, got, want, 100*rel)
	if rel > tol {
		t.Errorf("%s: simulated %v, theory %v: %.2f%% off, more than %.0f%%", what, got, want, 100*rel, 100*tol)
	}
}

// erlangC is the probability that an arrival waits in an M/M/c queue with
// offered load a = λ/μ (Erlang's C formula).
func erlangC(c int, a float64) float64 {
	// sum_{k<c} a^k/k! and a^c/c!, by running products.
	sum, term := 0.0, 1.0
	for k := range c {
		sum += term
		term *= a / float64(k+1)
	}
	top := term * float64(c) / (float64(c) - a)
	return top / (sum + top)
}

// longRun is the number of measured requests of the queueing checks, and
// tol the relative error they accept. 2 million requests put the
// simulated mean wait of M/M/1 at 70% load within about 0.5% of theory
// (one standard deviation, over seeds), so 2% is a 4-sigma check; the
// short run of 400,000 has about 1% and accepts 5%.
func longRun(t *testing.T) (n int, tol float64) {
	if testing.Short() {
		return 400000, 0.05
	}
	return 2000000, 0.02
}

func TestMM1MeanWait(t *testing.T) {
	const rate, mu = 700.0, 1000.0
	n, tol := longRun(t)
	s := queueScenario(t, 1, 1, rate, time.Second/time.Duration(mu), n, reusePort)
	st := simulate(t, s, reusePort)
	rho := rate / mu
	want := time.Duration(rho / (mu - rate) * float64(time.Second))
	within(t, "M/M/1 mean wait", st.MeanWait, want, tol)
	within(t, "M/M/1 mean latency", st.MeanLatency, want+time.Second/time.Duration(mu), tol)
}

func TestMMcMeanWait(t *testing.T) {
	const c, rate, mu = 4, 2800.0, 1000.0
	n, tol := longRun(t)
	s := queueScenario(t, 1, c, rate, time.Second/time.Duration(mu), n, reusePort)
	st := simulate(t, s, reusePort)
	want := time.Duration(erlangC(c, rate/mu) / (c*mu - rate) * float64(time.Second))
	within(t, "M/M/4 mean wait (Erlang C)", st.MeanWait, want, tol)
}

// ekM1Wait is the mean wait of an E_k/M/1 queue: arrivals with Erlang-k
// gaps of rate λ (what each of k servers sees from round robin over a
// Poisson stream of rate kλ), exponential service of rate μ. From GI/M/1
// theory, W = σ/(μ(1-σ)) with σ the root in (0, 1) of σ = A*(μ(1-σ)), A*
// the Laplace transform of the gaps: (kλ/(kλ+s))^k.
func ekM1Wait(k int, lambda, mu float64) time.Duration {
	sigma := 0.5
	for range 10000 {
		sigma = math.Pow(float64(k)*lambda/(float64(k)*lambda+mu*(1-sigma)), float64(k))
	}
	return time.Duration(sigma / (mu * (1 - sigma)) * float64(time.Second))
}

// TestRandomVersusRoundRobin dispatches one Poisson stream to N M/M/1
// servers through the balancer's own random and round_robin policies.
// Random splitting of a Poisson stream gives N independent M/M/1 queues at
// rate λ/N; round robin gives each server Erlang-N gaps, so less waiting;
// least_conn (join the shortest queue) waits less still.
func TestRandomVersusRoundRobin(t *testing.T) {
	const n, rate, mu = 4, 2800.0, 1000.0
	random, rr, lc := proxyVariant("random"), proxyVariant("round_robin"), proxyVariant("least_conn")
	requests, tol := longRun(t)
	s := queueScenario(t, n, 1, rate, time.Second/time.Duration(mu), requests, random, rr, lc)

	st := simulate(t, s, random)
	lambda := rate / n
	want := time.Duration(lambda / mu / (mu - lambda) * float64(time.Second))
	within(t, "random: N x M/M/1 mean wait", st.MeanWait, want, tol)

	stRR := simulate(t, s, rr)
	within(t, "round robin: E4/M/1 mean wait", stRR.MeanWait, ekM1Wait(n, lambda, mu), tol)
	stLC := simulate(t, s, lc)
	t.Logf("least_conn mean wait %v", stLC.MeanWait)
	if !(stLC.MeanWait < stRR.MeanWait && stRR.MeanWait < st.MeanWait) {
		t.Errorf("want least_conn < round_robin < random mean wait, got %v, %v, %v", stLC.MeanWait, stRR.MeanWait, st.MeanWait)
	}
}

// TestPreopenSpreadsRequests: with clients.preopen every connection is
// open at the start, pinned by the kernel's reuseport hash, and requests
// take them in turn, so with many connections each request lands on a
// worker drawn at random: N independent M/M/1 queues at λ/N, the random
// split. Without preopen the same load keeps to the few connections it
// needs. The tolerance is wider than the queueing checks': the fixed
// pinning of 4096 connections gives each worker a share off λ/N by about
// 0.8% (binomial), which at 50% load moves its mean wait about 3%.
func TestPreopenSpreadsRequests(t *testing.T) {
	const n, rate, mu, conns = 4, 2000.0, 1000.0, 4096
	requests, _ := longRun(t)
	s := queueScenario(t, n, 1, rate, time.Second/time.Duration(mu), requests, reusePort)
	s.Workload.Clients.Preopen = true
	r, st := run(t, s, reusePort)
	var accepted uint64
	for _, w := range r.Workers {
		accepted += w.Connections
	}
	if r.Generator.Opened != conns || accepted != conns || !r.Generator.Preopen {
		t.Errorf("preopen: opened %d, workers accepted %d, preopen %v; want all %d", r.Generator.Opened, accepted, r.Generator.Preopen, conns)
	}
	lambda := rate / n
	want := time.Duration(lambda / mu / (mu - lambda) * float64(time.Second))
	within(t, "preopen over reuseport: N x M/M/1 mean wait", st.MeanWait, want, 0.10)

	s.Workload.Clients.Preopen = false
	r, _ = run(t, s, reusePort)
	if r.Generator.Opened > conns/4 {
		t.Errorf("without preopen %d connections were opened for a load that keeps about 2 busy", r.Generator.Opened)
	}
}

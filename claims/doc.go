// Package claims judges a scenario's claims (scenario.Claim: what the
// documents behind it state, as a check such as "p99(least_conn) < 0.8 *
// p99(reuseport)") on its results: statistical checks by the interval
// verdicts use (package compare), exact ones on every run, and the burst
// experiments against the exact figures of random dispatch (package
// model, which only this package reads). It returns judged data (Result:
// outcome and evidence); package reports renders it.
package claims

// Package balance holds the load-balancing policies and the backends they
// pick from: one Policy interface, one file and one compile-time guard per
// policy, registered by stable snake_case names (round_robin, random, p2c,
// least_conn, ewma_least_conn, peak_ewma, hash) and built with NewPolicy
// from validated arguments; Register adds more.
//
// Two programs drive the same policy code: the built-in proxy (package
// targets/balancer), on real time with real requests, and the simulator
// (package model), which builds Backends with NewBackends, reports each
// request's start and end with Acquire and Release, and runs time-reading
// policies on simulated time through SetClock. That is why the policies
// live here and not inside the proxy: the model runs the real policies, not
// a copy, without depending on the proxy.
//
// Every policy skips backends marked down (MarkDown, passive health after a
// refused connection). Picks use atomics only and do not allocate (a test
// and BenchmarkPick show it).
package balance

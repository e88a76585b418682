// Package worker implements the HTTP worker (backend replica) that
// benchmarks send load to.
//
// A Worker serves at most Config.Concurrency requests at a time; further
// requests wait for a slot, first come first served, which is what makes a
// single-task worker (concurrency 1) build a queue when a load balancer
// sends it more than it can take. Each request's service time comes
// from its query (us=<microseconds> or ms=<milliseconds>) or from
// Config.Service, and is spent either sleeping or spinning on a CPU
// (Config.Mode). Config.InjectCost adds that much CPU time in busy work to
// every request, after its service time: a known extra cost per request.
//
// Routes, on every listener: /healthz answers 200 at once without taking a
// slot, /stats answers the Stats as JSON, and every other path does the
// work. Every response carries the header X-Worker with the worker's index,
// and the work's answers workloads.TimesHeader: when the worker received
// the request, began it and was done, on CLOCK_MONOTONIC.
//
// # Accept strategies
//
// When several worker processes share one listening socket (the pre-fork
// model, prefork.Shared), which of them gets a new connection depends on
// how they wait for it, and Go's default hides the choice. Config.Accept
// selects one of four, through ListenFD; Stats.Connections counts the
// connections each worker accepted, so the difference shows in /stats.
//
//   - AcceptNetpoll: http.Server on a net.Listener. The runtime registers
//     the socket in its own epoll instance, edge-triggered and without
//     EPOLLEXCLUSIVE, so every worker's netpoller wakes for every
//     connection (a thundering herd) and whichever accept4 runs first wins;
//     the others get EAGAIN. Who is first is up to the scheduler.
//   - AcceptBlocking: a blocking accept4(2) on the raw socket in the accept
//     loop's thread (O_NONBLOCK cleared on the shared socket), each
//     accepted socket wrapped into a net.Conn for the same http.Server. The
//     kernel queues blocked accepters in FIFO order and wakes exactly one,
//     the one that has waited longest, so connections go round robin.
//   - AcceptEpollExclusive: epoll_wait(2) on an epoll instance of the
//     worker's own holding the socket with EPOLLEXCLUSIVE, then accept4.
//     The socket's wait queue keeps the epoll instances in the order they
//     were registered and the kernel wakes the first one with a waiter:
//     whenever the first-registered worker is back in epoll_wait, it gets
//     the connection. Connections pile onto one worker, and onto the next
//     only while it is away (a ladder).
//   - AcceptPoll: a gunicorn sync worker's loop (gunicorn/workers/sync.py,
//     run_for_one: accept on the non-blocking socket, and only on EAGAIN
//     select(2) on it, then accept again). Here: a non-blocking accept4
//     first, then poll(2) on the socket. Every waiting worker is woken, as
//     in the herd, but poll puts its waiter on the socket's wait queue
//     afresh each call, where an epoll instance stays where it was
//     registered; so the order in which workers are woken follows the
//     order in which they began to wait, not the order in which they
//     started, and a worker that just finished takes a queued connection
//     before waiting at all.
//
// A Go worker's accept loop does not wait for its handlers, so a worker is
// "waiting" even while its only slot is taken: it accepts, and the request
// queues inside it. That is what makes the strategies differ so much.
// Config.MaxConns bounds the connections a worker holds open: at the limit
// it stops accepting, and with MaxConns equal to Concurrency a worker
// waits for a connection only while idle, as a synchronous pre-forked
// worker does; the strategy then only chooses among idle workers.
//
// # Event-loop workers (Config.AcceptWhen)
//
// With AcceptWhen AcceptIdle a worker calls accept(2) only while it has a
// free slot, as an event-loop server (nginx, Node, uvicorn with one
// worker, a gunicorn sync worker) does: while it computes, new
// connections wait in the kernel's queue for another worker. It counts as
// busy when Concurrency of its connections are new (accepted, first
// response not yet sent) or carrying a request; its idle keep-alive
// connections do not count, and a request arriving on one is served (it
// queues if the slots are taken). This holds for every strategy: a
// rawListener asks the gate right before each accept4 and epoll_wait; a
// netpoll listener is replaced by a raw one on the same socket waiting in
// epoll_wait without EPOLLEXCLUSIVE (Go's netpoller would accept as soon
// as the socket is readable), keeping the netpoller's thundering herd.
// Known limit: a blocking accept4 already in progress when a request on an
// open connection makes the worker busy cannot be recalled; the socket
// gets a 10 ms receive timeout so that it returns, but on Linux 6.18 TCP
// accepts ignored it there (Unix sockets honour it), so with AcceptBlocking
// on TCP such a worker may still take one connection while busy.
//
// Observed on a 2-core machine (scenarios/shared-accept.yaml: 8
// single-task workers, 600 req/s of 2 ms (exp) and 20 ms requests, a new
// connection per request; per-worker connection skew max/min and p99 per
// run, from a noisy, shared machine): blocking spread connections evenly
// (skew 1.06 to 1.09, p99 34 to 46 ms); netpoll unevenly (skew 3.8 to 15,
// p99 117 to 661 ms, as the winner of the herd is whoever the scheduler
// runs first); epoll-exclusive sent about 80% of the connections to one
// worker (skew 400 to 3700, p99 5 s: requests timed out in its queue).
// With MaxConns 1 all three kept p99 between 25 and 56 ms; epoll-exclusive
// still laddered (skew 7 to 13) but only idle workers took connections.
// With AcceptWhen idle (2026-12-01, a heavily shared machine, most runs
// flagged for send lag): p99 per run 21 to 35 ms (blocking), 22 to 470 ms
// (netpoll, one run with the generator 437 ms behind), 21 to 34 ms
// (epoll-exclusive), no timeouts; epoll-exclusive spread connections as a
// ladder (per worker, sorted: 1042 889 661 425 250 127 53 24 over three
// runs) instead of piling onto three workers and timing out (p99 9.7 s).
//
// Event-loop workers on a shared socket beside gunicorn (2026-12-02,
// scenarios/gunicorn.yaml: 4 single-task workers, accept_when idle, 300
// req/s of 2 ms (exp) and 20 ms requests, a new connection per request,
// 3 runs of 5 s): requests per worker over the three runs, and in
// brackets the median run's skew (max/min of its per-worker counts):
// netpoll's herd 1279 1219 973 819 (1.59), poll
// 1045 1078 1105 1062 (1.05), blocking 1062 1060 1069 1099 (1.06),
// gunicorn sync 1037 1076 1131 1046 (1.14); p99 21.0, 20.9, 20.9 and 21.3
// ms. The herd's epoll registrations wake in one fixed order, so the
// same workers win; gunicorn's select, like poll, does not.
//
// Closing a blocking listener shuts the shared socket down for a moment
// (the only way to wake a blocked accept; see ListenFD); the strategies
// also set O_NONBLOCK on the shared socket one way or the other, so all
// workers of a socket must use the same strategy.
package worker

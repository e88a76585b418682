// Package prefork is a process manager for N worker processes, the kind a
// pre-forking server has, that can also give every worker an endpoint of
// its own. It works on Linux only.
//
// The Supervisor allocates the endpoints and makes every listening socket
// itself, so that an address in use is an immediate, clear error, then
// starts the children, waits until each is healthy, checks their health
// every Config.HealthInterval, reports a child that fails (in the log, in
// Status and in the admin /stats) and, with Config.Restart, starts it again
// on the same sockets. Stop drains: every child gets SIGTERM, finishes the
// requests it accepted and exits. WriteProxyConfig turns the endpoints
// into an nginx upstream block or an HAProxy backend, rendered by package
// engines (engines.Upstream) as the engines' own configurations are.
//
// Listen modes (ListenMode): ReusePort (a socket per worker on one port,
// SO_REUSEPORT), Shared (one socket inherited by all), Ports (worker i on
// port+i) and Unix (worker i on SocketDir/worker-i.sock). Asking for
// SO_REUSEPORT on a Unix socket (ReusePort with a SocketDir) is refused by
// the kernel, and Start says so.
//
// A built-in child gets two inherited file descriptors: fd 3 is its main
// listener and fd 4 its private admin listener on 127.0.0.1 (health and
// stats). The child side is WorkerMain, which the lbbench binary runs as
// its hidden "worker" command; it gets its worker.Config in the environment
// variable named by EnvWorkerConfig and accepts with the strategy the
// config names (see package worker). Children stay in the supervisor's
// process group (so a Ctrl-C in a terminal reaches them too) and are killed
// by the kernel if the supervisor dies.
//
// Config.Exec runs a foreign server instead (Gunicorn, Uvicorn, your own):
// a command template with placeholders for its endpoint, started once per
// worker, or once for all workers under a Shared port; readiness and health
// are an HTTP probe on a path the user names. See Exec.
//
// The supervisor keeps its copies of the listening sockets only with
// Restart, so that connections wait in the kernel's queue while a worker
// restarts. Without it the copies are closed once the workers are healthy:
// a reuseport socket kept by the supervisor would stay in the port's group
// after its worker died and get connections that nobody accepts.
package prefork

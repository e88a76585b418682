// Package prefork runs N worker processes, each serving a worker.Worker, the
// way a pre-forking server does. It works on Linux only.
//
// The Supervisor creates every listening socket itself and hands each child
// two of them as inherited file descriptors: fd 3 is the worker's main
// listener and fd 4 its private admin listener on 127.0.0.1 (health and
// stats). Creating the sockets up front makes a port in use an immediate,
// clear error, and makes the listen mode (ListenMode) a matter for the
// supervisor alone: children are the same in every mode.
//
// The child side is WorkerMain, which the lbbench binary runs as its hidden
// "worker" command. Children get the worker.Config in the environment
// variable named by EnvWorkerConfig, stay in the supervisor's process group
// (so a Ctrl-C in a terminal reaches them too) and are killed by the kernel
// if the supervisor dies.
package prefork

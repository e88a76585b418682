// Package local is the local driver: a plan's processes run as children
// of this process on loopback, each in a process group of its own with
// Pdeathsig set, so that even a SIGKILLed lbbench leaves none behind. CPU
// pinning (pin.go) puts the generator, which runs in this process, and the
// targets on disjoint CPUs where there are enough of them. Its
// deployments offer the load from this process or from K "lbbench attack"
// child processes (package loadgen).
package local

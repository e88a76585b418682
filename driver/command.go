package driver

import (
	"time"
)

// ProbeSubcommand is the lbbench subcommand that runs WaitHTTP or Fetch in
// a process of its own, where the driver cannot reach the URL itself (the
// docker driver runs it in the generator's container, on the run's
// network).
const ProbeSubcommand = "probe"

// ProbeTimedOut is the exit status of "lbbench probe" when the URL gave
// no answer in time (TimedOut), as opposed to a refusal or an error
// status (2).
const ProbeTimedOut = 4

// The flags of "lbbench probe".
const (
	FlagTimeout = "timeout"
	FlagGet     = "get"
)

// ProbeCommand is one readiness wait (WaitHTTP) or, with Get, one fetch
// (Fetch) of a URL.
type ProbeCommand struct {
	URL string
	// Timeout bounds the wait or the fetch; zero means the command's
	// default.
	Timeout time.Duration
	Get     bool
}

// Args returns the "lbbench probe" command line (subcommand first).
func (c ProbeCommand) Args() []string {
	a := []string{ProbeSubcommand}
	if c.Timeout != 0 {
		a = append(a, "--"+FlagTimeout, c.Timeout.String())
	}
	if c.Get {
		a = append(a, "--"+FlagGet)
	}
	return append(a, c.URL)
}

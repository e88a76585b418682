package loadgen

// AttackSubcommand is the lbbench subcommand that runs Attack in a process
// of its own: a generator.
const AttackSubcommand = "attack"

// The flags of "lbbench attack" that drivers give. AttackCommand.Args
// writes them and the command's flag set (cmd/lbbench) declares them, both
// by these names.
const (
	FlagTarget = "target"
	FlagSpec   = "spec"
	FlagOut    = "out"
	FlagQuiet  = "quiet"
	FlagLive   = "live"
)

// AttackCommand is how a driver runs one generator process.
type AttackCommand struct {
	// Target is the base URL load goes to (scheme://host:port, no path
	// or query: "lbbench attack" sends a URL with a path or query as a
	// literal target instead of the workload's classes).
	Target string
	// Spec is the path of the workload spec file (JSON, as
	// json.Marshal(workloads.Spec) writes it), or "-" for standard input.
	Spec string
	// Out is where the generator writes its results.Measurement; empty
	// for standard output.
	Out string
	// Quiet leaves out the summary on standard error.
	Quiet bool
	// Live prints a LiveStats JSON line per second on standard error.
	Live bool
}

// Args returns the "lbbench attack" command line (subcommand first).
func (c AttackCommand) Args() []string {
	a := []string{AttackSubcommand, "--" + FlagTarget, c.Target, "--" + FlagSpec, c.Spec}
	if c.Out != "" {
		a = append(a, "--"+FlagOut, c.Out)
	}
	if c.Quiet {
		a = append(a, "--"+FlagQuiet)
	}
	if c.Live {
		a = append(a, "--"+FlagLive)
	}
	return a
}

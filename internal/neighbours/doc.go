// Package neighbours is the registry of the lbbench runs on one host, so
// that a run can tell that another was running beside it. Two runs
// started together on one 2-CPU machine each measured the other's load
// as their target's: both finished "valid", each unaware of the other.
//
// Each registered run keeps a file in one directory (Dir) open and
// locked (flock, exclusive) for as long as it runs; another run lists the
// directory and tries a shared lock on each file without waiting: a file
// it cannot lock is a live run's, a file it can is left by a run that
// died (the kernel drops a dead process's locks) and is removed, never
// reported. A run that joins appends a line naming itself to the file of
// every live run, so that a run watching a window of its own learns of
// the runs that came and went during it (Registration.Watch), not only of
// those there at its ends.
//
// The directory is shared by every user (created like /tmp: world
// writable, sticky), so what is read from it is checked: regular files
// only, no symlinks followed, lines of bounded length whose fields are
// plausible, and names printable. Runs with different TMPDIRs (and no
// LBBENCH_RUNS_DIR) do not see each other.
package neighbours

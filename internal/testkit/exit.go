package testkit

import (
	"errors"
	"os/exec"
)

// ExitStatus is the exit status of a finished command from the error of
// its Run, Wait or Output: 0 for nil, the status of an *exec.ExitError
// (-1 when a signal ended it), and -1 when the command did not run.
func ExitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

package docker

import (
	"errors"
	"testing"

	"github.com/docker/docker/errdefs"
)

// TestRemoving: the daemon's "removal ... already in progress" (a
// conflict) means another client removes the container: not an error of
// a clean; any other conflict, or another error, still is.
func TestRemoving(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{errdefs.Conflict(errors.New("removal of container fbce08a59673 is already in progress")), true},
		{errdefs.Conflict(errors.New("container is running: stop the container before removing")), false},
		{errors.New("removal of container fbce08a59673 is already in progress"), false},
		{errdefs.NotFound(errors.New("no such container")), false},
	} {
		if got := removing(tc.err); got != tc.want {
			t.Errorf("removing(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/hardstop"
	"github.com/lbbench/lbbench/internal/testkit"
)

// TestInterruptEscalates: the first SIGINT cancels the context, the second
// starts the hard stop, and a third, or the grace passing after the
// second, exits with 130 whatever the command is doing.
func TestInterruptEscalates(t *testing.T) {
	for _, tc := range []struct {
		name    string
		signals int
		grace   time.Duration
		say     string
	}{
		{"third signal", 3, time.Hour, "interrupted a third time: exiting"},
		{"grace over", 2, 50 * time.Millisecond, "still running 50ms after the second interrupt: exiting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out testkit.Buffer
			exited := make(chan int, 1)
			ctx, stop := interruptContext(&out, tc.grace, func(code int) { exited <- code })
			defer stop()
			for i := 0; i < tc.signals; i++ {
				syscall.Kill(syscall.Getpid(), syscall.SIGINT)
				switch i {
				case 0:
					waitDone(t, ctx.Done(), "the first signal did not cancel the context")
				case 1:
					waitDone(t, hardstop.Done(ctx), "the second signal did not start the hard stop")
				}
			}
			select {
			case code := <-exited:
				if code != 130 {
					t.Errorf("exit(%d), want 130", code)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("no exit after %d signals:\n%s", tc.signals, out.String())
			}
			if !strings.Contains(out.String(), tc.say) {
				t.Errorf("output %q lacks %q", out.String(), tc.say)
			}
		})
	}
}

func waitDone(t *testing.T, done <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal(msg)
	}
}

package sleep

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// timer is a timerfd on CLOCK_MONOTONIC in non-blocking mode, wrapped in an
// os.File so that a read parks the goroutine in the network poller.
type timer struct {
	f  *os.File
	rc syscall.RawConn
}

// idle holds timers between waits: making one costs two syscalls and a
// registration with the poller, and a worker waits once per request. A
// timer returned when idle is full is closed.
var idle = make(chan *timer, 64)

// getTimer returns an idle timer, or a new one, or nil if the kernel
// refuses timerfds (a seccomp profile may).
func getTimer() *timer {
	select {
	case tf := <-idle:
		return tf
	default:
	}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	return &timer{f: f, rc: rc}
}

// putTimer keeps tf for the next wait, or closes it if its last wait
// failed (its state is unknown) or enough are kept already.
func putTimer(tf *timer, err error) {
	if err == nil {
		select {
		case idle <- tf:
			return
		default:
		}
	}
	tf.f.Close()
}

// until arms tf for what is left until t and reads it: the read parks the
// goroutine until the kernel's timer expires. The timer is armed relative
// to the kernel's now, which is later than the moment the remainder was
// computed, so it never fires early; the loop re-arms should it somehow
// fire before t by Go's clock.
//
// timerfd_settime and the non-blocking read never block, so they are made
// as raw syscalls (and no clock is read by a syscall): the runtime's
// syscall entry would wake its monitor thread from its deep sleep each
// time, and on a virtual machine each of those wake-ups costs more than
// the syscall itself.
func (tf *timer) until(t time.Time) error {
	for {
		d := time.Until(t)
		if d <= 0 {
			return nil
		}
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
		var err error
		if cerr := tf.rc.Control(func(fd uintptr) {
			_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
			if e != 0 {
				err = e
			}
		}); cerr != nil {
			return cerr
		}
		if err != nil {
			return err
		}
		var buf [8]byte // the count of expirations, not needed
		if cerr := tf.rc.Read(func(fd uintptr) bool {
			for {
				_, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
				switch e {
				case unix.EINTR:
					continue
				case unix.EAGAIN:
					return false // not expired: wait in the poller
				case 0:
				default:
					err = e
				}
				return true
			}
		}); cerr != nil {
			return cerr
		}
		if err != nil {
			return err
		}
	}
}

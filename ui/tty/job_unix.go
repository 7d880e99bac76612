//go:build linux || darwin

package tty

import "golang.org/x/sys/unix"

// jobControl reports whether a shell can continue this job once it stops.
// A process group whose members' parents are all inside it or in another
// session is orphaned (POSIX): the kernel discards a stop sent to it, as
// when vkwatch is a session leader (ssh host vkwatch, docker run -t,
// setsid). The parent in the same session is what a shell with job control
// is; a parent in the same process group (sh -c vkwatch) passes too, its
// own parent not looked at.
func jobControl() bool {
	sid, err := unix.Getsid(0)
	if err != nil {
		return false
	}
	psid, err := unix.Getsid(unix.Getppid())
	return err == nil && psid == sid
}

// stopJob stops the process group, as ctrl+z does in a terminal's own modes.
func stopJob() { _ = unix.Kill(0, unix.SIGTSTP) }

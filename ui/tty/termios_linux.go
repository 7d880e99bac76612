package tty

import "golang.org/x/sys/unix"

// The terminal's modes, as golang.org/x/term reads and sets them here.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)

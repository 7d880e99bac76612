package tty

import "golang.org/x/sys/unix"

// ioctlGetTermios reads a terminal's modes (TCGETS on Linux, TIOCGETA on macOS).
const ioctlGetTermios = unix.TCGETS

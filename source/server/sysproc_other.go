//go:build !linux

package server

import "syscall"

// sysProcAttr puts the server in its own process group so that a ctrl+c at
// the terminal is vkwatch's to handle.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

package server

import "syscall"

// sysProcAttr puts the server in its own process group (a ctrl+c at the
// terminal is vkwatch's to handle, not the server's) and kills it when
// vkwatch dies, however it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

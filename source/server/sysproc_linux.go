package server

import "syscall"

// sysProcAttr puts the server in its own process group (a ctrl+c at the
// terminal is vkwatch's to handle, not the server's) and kills it when
// vkwatch dies, however it dies.
//
// Pdeathsig fires when the OS thread that started the child exits, not the
// process. Go only ends a thread under a goroutine that called
// runtime.LockOSThread and returned still locked; nothing in vkwatch that
// starts a server does, so in practice the signal comes when the process
// ends. Do not start servers from a locked goroutine.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

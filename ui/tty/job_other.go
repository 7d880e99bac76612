//go:build !linux && !darwin

package tty

// jobControl is false where vkwatch knows no job control: ctrl+z does nothing.
func jobControl() bool { return false }

func stopJob() {}

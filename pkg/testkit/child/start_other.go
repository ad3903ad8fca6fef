//go:build !linux

package child

import (
	"os/exec"
	"syscall"
)

// Start starts cmd. Only Linux has a parent-death signal: elsewhere cmd may outlive this
// process if it is killed, and only Sweep (which needs Linux's /proc too) would end it.
func Start(cmd *exec.Cmd, sig syscall.Signal) error { return cmd.Start() }

// DieWithParent does nothing where there is no parent-death signal (only Linux has one).
func DieWithParent(sig syscall.Signal) error { return nil }

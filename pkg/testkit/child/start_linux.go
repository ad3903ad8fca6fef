package child

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Start starts cmd so that the kernel sends it sig when this process ends, however it ends
// (SIGKILL included): Linux's parent-death signal, set in the child before it runs cmd. The
// kernel sends it when the *thread* that started the child ends, not the process
// (go.dev/issue/27505): a goroutine locked to its thread ends that thread when it returns. So
// every child starts from one goroutine locked to its thread that never returns: that thread
// ends with the process and only then. Other fields of cmd.SysProcAttr are kept.
func Start(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
	var err error
	onSpawner(func() { err = cmd.Start() })
	return err
}

// DieWithParent asks the kernel to send sig to this process when its parent ends: a command
// run by make gets it when make is killed with SIGKILL. The setting is the calling thread's
// and stays only while that thread lives: it is made on the thread Start uses, which lives as
// long as the process. If the parent has ended already, sig is sent at once.
func DieWithParent(sig syscall.Signal) error {
	parent := os.Getppid()
	var errno syscall.Errno
	onSpawner(func() {
		_, _, errno = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(sig), 0)
	})
	if errno != 0 {
		return fmt.Errorf("set the parent-death signal: %w", errno)
	}
	if os.Getppid() != parent { // it ended before the setting took
		return syscall.Kill(os.Getpid(), sig)
	}
	return nil
}

var (
	spawnerOnce sync.Once
	spawns      chan func()
)

// onSpawner runs f on the spawner thread and returns when f has.
func onSpawner(f func()) {
	spawnerOnce.Do(func() {
		spawns = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked; the goroutine never returns
			for f := range spawns {
				f()
			}
		}()
	})
	done := make(chan struct{})
	spawns <- func() { f(); close(done) }
	<-done
}

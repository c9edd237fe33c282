//go:build unix

package agencysandbox

import (
	"os"
	"syscall"
	"time"
)

// The group's id is the started process's pid (Setpgid), whether or not that process still runs.
func terminateGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGTERM) }
func killGroup(pgid int)      { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// raise ends this process with the signal, its handler reset to the default.
func raise(sig os.Signal) {
	_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
	time.Sleep(time.Second)
	os.Exit(2)
}

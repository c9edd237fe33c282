package agencysandbox

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// A process group of its own (no Ctrl-C from the console); its tree is ended by taskkill. A
// sandbox whose test binary died stops itself as its stdin pipe closes.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// Windows has no SIGTERM: the whole tree is ended at once.
func terminateGroup(pid int) {
	_ = exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid)).Run()
}

func killGroup(pid int) { terminateGroup(pid) }

func groupAlive(_ int, exited <-chan struct{}) bool {
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

var stopSignals = []os.Signal{os.Interrupt}

func raise(os.Signal) { os.Exit(2) }

//go:build unix && !linux

package agencysandbox

import "syscall"

// A process group of its own, so that a stop reaches every process a launcher started. Without
// Linux's Pdeathsig, a sandbox whose test binary died stops itself as its stdin pipe closes.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// groupAlive tells whether a process of the group still runs; the started process counts as gone
// once it has ended (its exit reaped).
func groupAlive(pgid int, exited <-chan struct{}) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	select {
	case <-exited:
		// a launcher's children may remain in the group after the started process ended
		return syscall.Kill(-pgid, 0) == nil
	default:
		return true
	}
}

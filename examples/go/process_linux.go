package agencysandbox

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// A process group of its own, so that a stop reaches every process a launcher started; and
// SIGTERM when this process dies (the thread that started it, which Go keeps for the process's life).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// groupAlive tells whether a process of the group still runs. A zombie (ended, not yet reaped:
// an orphan under an init that does not reap) counts as gone.
func groupAlive(pgid int, _ <-chan struct{}) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, entry := range entries {
		if _, err := strconv.Atoi(entry.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + entry.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so read after the last ')'
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" && fields[0] != "X" {
			return true
		}
	}
	return false
}

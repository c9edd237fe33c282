// Command with-sandbox runs a command with one sandbox for all of it: it starts the sandbox (or
// attaches to AGENCY_SANDBOX_URL), runs the command with AGENCY_SANDBOX_URL set to it, then stops
// the sandbox and exits with the command's status.
//
//	go run ./cmd/with-sandbox go test -parallel 8 ./...
//
// go test runs each package's tests as a process of its own; each one's agencysandbox.Run then
// attaches to this one sandbox instead of starting its own. SIGINT, SIGTERM and SIGHUP reach the
// command, and the sandbox is stopped all the same.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"example.com/agencysandbox"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: with-sandbox <command> [args...]   e.g. go run ./cmd/with-sandbox go test -parallel 8 ./...")
		os.Exit(2)
	}
	sandbox, err := agencysandbox.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "agency sandbox:", err)
		os.Exit(1)
	}
	command := exec.Command(os.Args[1], os.Args[2:]...)
	command.Stdin, command.Stdout, command.Stderr = os.Stdin, os.Stdout, os.Stderr
	command.Env = append(os.Environ(), "AGENCY_SANDBOX_URL="+sandbox.URL)
	heard := make(chan os.Signal, 1)
	signal.Notify(heard, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	if err := command.Start(); err != nil {
		sandbox.Stop()
		fmt.Fprintln(os.Stderr, "could not run", os.Args[1]+":", err)
		os.Exit(127)
	}
	go func() {
		for sig := range heard {
			_ = command.Process.Signal(sig)
		}
	}()
	err = command.Wait()
	sandbox.Stop()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code := exit.ExitCode()
		if code < 0 { // ended by a signal
			code = 1
		}
		os.Exit(code)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

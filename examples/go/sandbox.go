// Package agencysandbox runs the agency sandbox for Go tests, with the standard library only.
//
// One sandbox serves a whole test binary; each test takes a world of its own, so tests run in
// parallel (go test -parallel 8) without seeing each other's data, clock, faults or journal:
//
//	func TestMain(m *testing.M) { os.Exit(agencysandbox.Run(m)) }
//
//	func TestSync(t *testing.T) {
//		t.Parallel()
//		w := agencysandbox.World(t) // deleted when the test ends
//		abc := w.Integration("abc") // the world's Client Id and Client Secret
//		...
//	}
//
// Where the sandbox comes from, first match wins:
//
//	AGENCY_SANDBOX_URL   attach to a sandbox that already runs (a container, a CI service)
//	AGENCY_SANDBOX_CMD   the command line that starts one, e.g. "node ../agency-sandbox/dist/bundle/cli.js"
//	agency-sandbox       installed in the project (node_modules/.bin, searched from the current
//	                     directory upwards) or on PATH
//
// and AGENCY_SANDBOX_TOKEN is the control token, when the sandbox has one.
//
// A started sandbox listens on a port it picks itself (serve --port 0) and says which on its
// stdout. It runs in a process group of its own, stopped as a whole (SIGTERM, then SIGKILL after
// 10 s) when Run returns, on SIGINT, SIGTERM and SIGHUP, and when the test binary dies any other
// way: Linux sends the started process SIGTERM when its parent dies (Pdeathsig), and the sandbox
// stops itself when the pipe on its stdin, which only this process holds, closes
// (serve --exit-on-stdin-close), through any launcher in between (npx, a shell script).
package agencysandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"
)

const (
	bin = "agency-sandbox"
	// StopGrace is how long a stopped sandbox has to close before its group is killed.
	StopGrace = 10 * time.Second
	// StartTimeout bounds how long Start waits for a sandbox to listen (or to answer, attached).
	StartTimeout = 30 * time.Second
)

// Sandbox is a running sandbox: one this process started, or one it attached to.
type Sandbox struct {
	// URL is the sandbox's base URL, e.g. http://127.0.0.1:41233 (the vendor API is under /vendor).
	URL string
	// Token is the control token (AGENCY_SANDBOX_TOKEN), empty when the sandbox has none.
	Token string
	// HTTP is the client of every call the kit makes.
	HTTP *http.Client

	cmd      *exec.Cmd
	stdin    *os.File // the write end of the sandbox's stdin: closed, the sandbox stops itself
	exited   chan struct{}
	stopOnce sync.Once
}

// Start attaches to AGENCY_SANDBOX_URL, or starts a sandbox process and waits until it listens.
func Start(ctx context.Context) (*Sandbox, error) {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	s := &Sandbox{Token: os.Getenv("AGENCY_SANDBOX_TOKEN"), HTTP: &http.Client{Timeout: 60 * time.Second}}
	if url := strings.TrimSpace(os.Getenv("AGENCY_SANDBOX_URL")); url != "" {
		s.URL = strings.TrimRight(url, "/")
		return s, s.waitHealthy(ctx)
	}
	command, err := Command()
	if err != nil {
		return nil, err
	}
	if err := s.start(ctx, command); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Sandbox) start(ctx context.Context, command []string) error {
	stdinRead, stdinWrite, err := os.Pipe()
	if err != nil {
		return err
	}
	stdoutRead, stdoutWrite, err := os.Pipe()
	if err != nil {
		stdinRead.Close()
		stdinWrite.Close()
		return err
	}
	args := append(command[1:len(command):len(command)], "serve", "--port", "0", "--db", ":memory:", "--log-level", "warn", "--exit-on-stdin-close")
	s.cmd = exec.Command(command[0], args...)
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = stdinRead, stdoutWrite, os.Stderr
	s.cmd.SysProcAttr = sysProcAttr()
	s.stdin = stdinWrite
	s.exited = make(chan struct{})
	stopOnSignals()
	// Started while holding the lock: a signal that arrives now stops this sandbox too.
	running.Lock()
	err = s.cmd.Start()
	if err == nil {
		running.set[s] = struct{}{}
	}
	running.Unlock()
	stdinRead.Close()
	stdoutWrite.Close()
	if err != nil {
		stdoutRead.Close()
		stdinWrite.Close()
		return fmt.Errorf("could not run %s: %w", strings.Join(command, " "), err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	ready := make(chan string, 1)
	go readStdout(stdoutRead, ready)
	select {
	case s.URL = <-ready:
		return nil
	case <-s.exited:
		return fmt.Errorf("the sandbox (%s) exited with %s before it was listening", strings.Join(command, " "), s.cmd.ProcessState)
	case <-ctx.Done():
		return fmt.Errorf("the sandbox (%s) did not say where it listens within %s: %w", strings.Join(command, " "), StartTimeout, ctx.Err())
	}
}

// readStdout reads the sandbox's stdout to its end: the line {"url":...,"pid":...} it prints once
// listening goes to ready, the rest (warnings) is dropped. A pipe nobody reads would stall the
// sandbox once full.
func readStdout(stdout *os.File, ready chan<- string) {
	defer stdout.Close()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 64*1024), 1024*1024)
	for lines.Scan() {
		if !strings.HasPrefix(lines.Text(), `{"url":`) {
			continue
		}
		var said struct{ URL string }
		if json.Unmarshal(lines.Bytes(), &said) == nil && said.URL != "" {
			select {
			case ready <- said.URL:
			default:
			}
		}
	}
}

func (s *Sandbox) waitHealthy(ctx context.Context) error {
	for {
		var health struct{ Status string }
		err := s.control(ctx, http.MethodGet, "/_sandbox/health", nil, &health)
		if err == nil && health.Status == "ok" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s/_sandbox/health did not answer within %s (last: %v)", s.URL, StartTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Pid is the process id of the started sandbox (the launcher's, when the command is one); 0 when attached.
func (s *Sandbox) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Stop ends every process of a sandbox this process started: SIGTERM to its process group, SIGKILL
// after StopGrace. A sandbox attached to is left running.
func (s *Sandbox) Stop() {
	s.stopOnce.Do(func() {
		running.Lock()
		delete(running.set, s)
		running.Unlock()
		if s.cmd == nil || s.cmd.Process == nil {
			return
		}
		pid := s.cmd.Process.Pid
		for _, step := range []struct {
			kill  func(int)
			grace time.Duration
		}{{terminateGroup, StopGrace}, {killGroup, 5 * time.Second}} {
			step.kill(pid)
			deadline := time.Now().Add(step.grace)
			for groupAlive(pid, s.exited) && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if !groupAlive(pid, s.exited) {
				break
			}
		}
		s.stdin.Close()
	})
}

// Command is the command line that starts a sandbox: AGENCY_SANDBOX_CMD, else
// node_modules/.bin/agency-sandbox from the current directory upwards, else agency-sandbox on PATH.
func Command() ([]string, error) {
	if configured := strings.TrimSpace(os.Getenv("AGENCY_SANDBOX_CMD")); configured != "" {
		return SplitCommand(configured), nil
	}
	names := []string{bin}
	if runtime.GOOS == "windows" {
		names = []string{bin + ".cmd", bin}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for folder := cwd; ; folder = filepath.Dir(folder) {
		for _, name := range names {
			candidate := filepath.Join(folder, "node_modules", ".bin", name)
			if info, err := os.Stat(candidate); err == nil && !info.IsDir() && (runtime.GOOS == "windows" || info.Mode()&0o111 != 0) {
				return []string{candidate}, nil
			}
		}
		if filepath.Dir(folder) == folder {
			break
		}
	}
	for _, name := range names {
		if found, err := exec.LookPath(name); err == nil {
			return []string{found}, nil
		}
	}
	return nil, errors.New(strings.Join([]string{
		"no agency sandbox to use. Any one of these three ways works:",
		"  1. AGENCY_SANDBOX_URL=http://127.0.0.1:8080  attach to a sandbox that already runs (a container, a CI service)",
		"  2. AGENCY_SANDBOX_CMD='node /path/to/agency-sandbox/dist/bundle/cli.js'  the command that starts one",
		"  3. install the package in this project (npm install --save-dev ./agency-sandbox-<version>.tgz, or a git dependency):",
		"     its node_modules/.bin/" + bin + " is found from " + cwd + " upwards, or `" + bin + "` on PATH",
		"(the package is not on the npm registry yet, so `npx agency-sandbox` cannot fetch it)",
	}, "\n"))
}

var words = regexp.MustCompile(`"([^"]*)"|'([^']*)'|(\S+)`)

// SplitCommand splits a command line into words: spaces separate them, single or double quotes keep
// spaces inside one.
func SplitCommand(line string) []string {
	var out []string
	for _, m := range words.FindAllStringSubmatch(line, -1) {
		switch {
		case m[1] != "" || strings.HasPrefix(m[0], `"`):
			out = append(out, m[1])
		case m[2] != "" || strings.HasPrefix(m[0], "'"):
			out = append(out, m[2])
		default:
			out = append(out, m[3])
		}
	}
	return out
}

// The sandboxes this process started and has not stopped yet.
var running = struct {
	sync.Mutex
	set map[*Sandbox]struct{}
}{set: map[*Sandbox]struct{}{}}

var signalsOnce sync.Once

// stopOnSignals: once per process, SIGINT, SIGTERM and SIGHUP stop every sandbox still running,
// then the signal is raised again, so that the test binary ends as it would have without the kit.
func stopOnSignals() {
	signalsOnce.Do(func() {
		heard := make(chan os.Signal, 1)
		signal.Notify(heard, stopSignals...)
		go func() {
			sig := <-heard
			stopAll()
			signal.Reset(stopSignals...)
			raise(sig)
		}()
	})
}

func stopAll() {
	running.Lock()
	all := make([]*Sandbox, 0, len(running.set))
	for s := range running.set {
		all = append(all, s)
	}
	running.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func(s *Sandbox) {
			defer wg.Done()
			s.Stop()
		}(s)
	}
	wg.Wait()
}

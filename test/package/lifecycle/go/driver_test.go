// A go test binary that starts a sandbox through examples/go, prints `started <pid> <url>`, then,
// on a line from stdin, by the mode given after the flags: `stop` stops it and prints `stopped`;
// `exit` exits without stopping it (os.Exit runs no hook: the sandbox's stdin pipe and Pdeathsig
// must end it); `wait` waits for a signal to end the process; `reach` prints `reached <url>` at
// once and ends, as a test binary does (Run stops the sandbox).
package lifecycle

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"example.com/agencysandbox"
)

func TestMain(m *testing.M) { os.Exit(agencysandbox.Run(m)) }

func TestDriver(t *testing.T) {
	sandbox := agencysandbox.Shared(t)
	if flag.Arg(0) == "reach" {
		fmt.Printf("reached %s\n", sandbox.URL)
		return
	}
	fmt.Printf("started %d %s\n", sandbox.Pid(), sandbox.URL)
	stdin := bufio.NewReader(os.Stdin)
	switch flag.Arg(0) {
	case "stop":
		_, _ = stdin.ReadString('\n')
		sandbox.Stop()
		fmt.Println("stopped")
		os.Exit(0)
	case "exit":
		_, _ = stdin.ReadString('\n')
		os.Exit(0)
	default:
		time.Sleep(time.Hour)
	}
}

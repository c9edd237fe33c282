package agencysandbox

import (
	"context"
	"sync"
	"testing"
)

var shared struct {
	once    sync.Once
	sandbox *Sandbox
	err     error
}

// Run runs a test binary's tests with one sandbox for all of them, started on first use (Shared,
// World) and stopped once they have run. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(agencysandbox.Run(m)) }
//
// Without it the sandbox still stops when the test binary exits (its stdin pipe closes), but
// nothing waits for it.
func Run(m *testing.M) int {
	code := m.Run()
	if shared.sandbox != nil {
		shared.sandbox.Stop()
	}
	return code
}

// Shared is the test binary's sandbox: attached to or started on first use, as Start does; a
// failed start fails every test that asks, with the reason.
func Shared(t testing.TB) *Sandbox {
	t.Helper()
	shared.once.Do(func() {
		shared.sandbox, shared.err = Start(context.Background())
	})
	if shared.err != nil {
		t.Fatalf("agency sandbox: %v", shared.err)
	}
	return shared.sandbox
}

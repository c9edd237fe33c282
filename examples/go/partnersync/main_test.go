package partnersync_test

import (
	"net/http"
	"os"
	"testing"
	"time"

	"example.com/agencysandbox"
	"example.com/agencysandbox/partnersync"
)

// One sandbox for every test of this package, stopped once they have run.
func TestMain(m *testing.M) { os.Exit(agencysandbox.Run(m)) }

const agency = 1001

// syncerFor is the integration under test, configured as in production: a base URL and the
// credentials of the world's copy of the demo integration abc.
func syncerFor(w *agencysandbox.SandboxWorld) *partnersync.Syncer {
	abc := w.Integration("abc")
	return &partnersync.Syncer{
		BaseURL: w.VendorURL(), ClientID: abc.ClientID, ClientSecret: abc.ClientSecret,
		HTTP: &http.Client{Timeout: 30 * time.Second},
	}
}

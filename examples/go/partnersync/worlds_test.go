package partnersync_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"example.com/agencysandbox"
	"example.com/agencysandbox/partnersync"
)

// Tests side by side in one sandbox, each in its world: every count, number and time asserted here
// would change if another test's writes, faults or clock reached this world.
func TestEachWorldIsItsOwn(t *testing.T) {
	for n := 1; n <= 8; n++ {
		n := n
		t.Run(fmt.Sprintf("%d notes in %d", n, 2026+n), func(t *testing.T) {
			t.Parallel()
			w := agencysandbox.World(t)
			now := time.Date(2026+n, 3, 1, 9, 0, 0, 0, time.UTC)
			if clock := w.SetClock(now, true); !clock.Now.Equal(now) || !clock.Frozen {
				t.Fatalf("clock %+v", clock)
			}
			s := syncerFor(w)
			for i := 0; i < n; i++ {
				if _, err := s.AddLogNote(ctx, agency, 1000+i, partnersync.LogNote{TS: now.Format(time.RFC3339), Channel: 29, Note: fmt.Sprintf("note %d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			writes := w.Writes(agency, "")
			if len(writes) != n {
				t.Fatalf("%d writes, want this test's %d", len(writes), n)
			}
			for _, write := range writes {
				if write.Integration != "abc@"+w.ID || !strings.HasPrefix(write.ReceivedAt, now.Format("2006-01-02T15:04:05")) {
					t.Fatalf("write %+v: want abc@%s at %s", write, w.ID, now)
				}
			}
			read, err := s.SyncAgency(ctx, agency, partnersync.Mirror{}, now.Add(-time.Second).Format(time.RFC3339))
			if err != nil {
				t.Fatal(err)
			}
			if len(read) != n {
				t.Fatalf("%d clients changed since the notes, want %d", len(read), n)
			}
		})
	}
}

func TestAFaultAnswersItsWorldOnly(t *testing.T) {
	t.Parallel()
	faulty, other := agencysandbox.World(t), agencysandbox.World(t)
	faulty.AddFault(agencysandbox.Fault{Match: agencysandbox.FaultMatch{Path: "/vendor/agency/*/clients"}, Effect: agencysandbox.FaultEffect{Status: 500}})
	s := syncerFor(faulty)
	s.Attempts = 2
	if _, err := s.SyncAgency(ctx, agency, partnersync.Mirror{}, ""); err == nil || !strings.Contains(err.Error(), "answered 500") {
		t.Fatalf("error %v: want the fault's 500", err)
	}
	if _, err := syncerFor(other).SyncAgency(ctx, agency, partnersync.Mirror{}, ""); err != nil {
		t.Fatalf("the other world has no fault: %v", err)
	}
	if got := len(other.Faults()); got != 0 {
		t.Fatalf("the other world has %d fault rules", got)
	}
}

func TestResetReturnsTheWorldToItsStart(t *testing.T) {
	t.Parallel()
	w := agencysandbox.World(t)
	w.SetClock(time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC), true)
	w.AddFault(agencysandbox.Fault{Effect: agencysandbox.FaultEffect{Status: 503}})
	if _, err := syncerFor(w).AddLogNote(ctx, 1004, 1000, partnersync.LogNote{TS: "2030-06-01T00:00:00Z", Channel: 29, Note: "n"}); err == nil {
		t.Fatal("the fault should have answered every attempt")
	}
	w.Reset()
	if len(w.Faults()) != 0 || len(w.Requests(agencysandbox.RequestFilter{})) != 0 || len(w.Writes(1004, "")) != 0 || w.Clock().Frozen {
		t.Fatal("after a reset: no fault, no request, no write, a running clock")
	}
}

func TestADeletedWorldRefusesItsCredentials(t *testing.T) {
	t.Parallel()
	w := agencysandbox.World(t)
	s := syncerFor(w)
	if _, err := s.SyncAgency(ctx, agency, partnersync.Mirror{}, ""); err != nil {
		t.Fatal(err)
	}
	if err := w.Delete(); err != nil {
		t.Fatal(err)
	}
	_, err := s.SyncAgency(ctx, agency, partnersync.Mirror{}, "")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("answered %d", http.StatusUnauthorized)) {
		t.Fatalf("error %v: want a 401", err)
	}
	var control *agencysandbox.ControlError
	if err := w.Control(http.MethodGet, "/clock", nil, nil); !errors.As(err, &control) || control.Status != http.StatusNotFound {
		t.Fatalf("the deleted world's control answered %v, want 404", err)
	}
}

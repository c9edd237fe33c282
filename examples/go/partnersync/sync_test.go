package partnersync_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"example.com/agencysandbox"
	"example.com/agencysandbox/partnersync"
)

var ctx = context.Background()

func TestAFirstSyncReadsEveryClientInBatchesOf200(t *testing.T) {
	t.Parallel()
	w := agencysandbox.World(t)
	mirror := partnersync.Mirror{}
	read, err := syncerFor(w).SyncAgency(ctx, agency, mirror, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(read) <= partnersync.Batch || len(mirror) != len(read) {
		t.Fatalf("read %d clients, mirrored %d: want more than one batch, all mirrored", len(read), len(mirror))
	}
	batches := w.Requests(agencysandbox.RequestFilter{Method: "POST", Path: "/vendor/agency/1001/clients"})
	if want := (len(read) + partnersync.Batch - 1) / partnersync.Batch; len(batches) != want {
		t.Fatalf("%d batch reads, want %d", len(batches), want)
	}
	for _, b := range batches {
		if b.Status != 200 || b.Integration != w.Integration("abc").ClientID {
			t.Fatalf("batch read answered %d to %s", b.Status, b.Integration)
		}
	}
}

func TestA503IsRetried(t *testing.T) {
	t.Parallel()
	w := agencysandbox.World(t)
	w.AddFault(agencysandbox.Fault{
		Match:  agencysandbox.FaultMatch{Method: "POST", Path: "/vendor/agency/*/clients"},
		Effect: agencysandbox.FaultEffect{Status: 503, Headers: map[string]string{"Retry-After": "0"}},
		Times:  1,
	})
	mirror := partnersync.Mirror{}
	if _, err := syncerFor(w).SyncAgency(ctx, agency, mirror, ""); err != nil {
		t.Fatal(err)
	}
	posts := w.Requests(agencysandbox.RequestFilter{Method: "POST"})
	if posts[0].Status != 503 || posts[1].Status != 200 {
		t.Fatalf("statuses %d, %d: want the 503, then the same batch read again", posts[0].Status, posts[1].Status)
	}
	if hits := w.Faults()[0].Hits; hits != 1 {
		t.Fatalf("the fault answered %d requests, want 1", hits)
	}
}

func TestTheNextSyncReadsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	w := agencysandbox.World(t)
	lastSync := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	w.SetClock(lastSync, true)
	s, mirror := syncerFor(w), partnersync.Mirror{}
	if _, err := s.SyncAgency(ctx, agency, mirror, ""); err != nil {
		t.Fatal(err)
	}
	w.AdvanceClock(time.Minute)
	w.PatchClient(agency, 1000, map[string]any{"details": map[string]any{"status": "DeadFile"}})
	read, err := s.SyncAgency(ctx, agency, mirror, lastSync.Format(time.RFC3339))
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != 1 || read[0] != 1000 {
		t.Fatalf("read %v, want [1000] alone", read)
	}
	if !strings.HasPrefix(mirror[1000], "2027-01-01T00:01:00") {
		t.Fatalf("client 1000 modified %s, want the world's clock, 2027-01-01T00:01:00", mirror[1000])
	}
}

func TestALogNoteWhoseAnswerIsLostIsWrittenOnce(t *testing.T) {
	t.Parallel()
	w := agencysandbox.World(t)
	w.AddFault(agencysandbox.Fault{
		Match:  agencysandbox.FaultMatch{Method: "POST", Path: "/vendor/agency/*/client/*/log"},
		Effect: agencysandbox.FaultEffect{DropAnswer: true},
		Times:  1,
	})
	status, err := syncerFor(w).AddLogNote(ctx, agency, 1000, partnersync.LogNote{TS: "2026-11-20T10:00:00Z", Channel: 29, Note: "Called back"})
	if err != nil || status != 200 {
		t.Fatalf("status %d, error %v", status, err)
	}
	sent := w.Requests(agencysandbox.RequestFilter{Method: "POST"})
	writes := w.Writes(agency, "")
	if len(sent) != 2 || len(writes) != 1 || writes[0].Kind != "log" || writes[0].Data["note"] != "Called back" {
		t.Fatalf("%d requests and %d writes (%+v): want the note sent twice under one RefId, written once", len(sent), len(writes), writes)
	}
}

func TestADisconnectedAgencyKeepsTheNoteUntilItIsConnected(t *testing.T) {
	t.Parallel()
	w := agencysandbox.World(t)
	w.PatchAgency(1004, map[string]any{"connected": false})
	status, err := syncerFor(w).AddLogNote(ctx, 1004, 1000, partnersync.LogNote{TS: "2026-11-20T10:00:00Z", Channel: 29, Note: "Call back Monday"})
	if err != nil || status != 202 {
		t.Fatalf("status %d, error %v: want 202, saved for later", status, err)
	}
	if pending := w.Writes(1004, "pending"); len(pending) != 1 {
		t.Fatalf("%d pending writes, want 1", len(pending))
	}
	w.PatchAgency(1004, map[string]any{"connected": true})
	if applied := w.Writes(1004, "applied"); len(applied) != 1 {
		t.Fatalf("%d applied writes, want 1 once the agency is connected", len(applied))
	}
}

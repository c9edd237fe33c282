package partnersync_test

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	"example.com/agencysandbox"
	"example.com/agencysandbox/partnersync"
)

// An examiner session around a sync: the report judges the recorded requests and compares the
// mirror; a sandbox with a signing key (SANDBOX_SIGNING_KEY) signs it, and the signature is checked
// here with crypto/ed25519 alone.
func TestAnExaminedSyncGetsASignedReport(t *testing.T) {
	t.Parallel()
	w := agencysandbox.World(t)
	key, err := w.Sandbox.SigningKey(ctx)
	var control *agencysandbox.ControlError
	if errors.As(err, &control) && control.Status == http.StatusNotFound {
		t.Skip("the sandbox signs no reports: start it with SANDBOX_SIGNING_KEY=<an Ed25519 private key, PEM> (openssl genpkey -algorithm ed25519)")
	}
	if err != nil {
		t.Fatal(err)
	}
	session := w.StartSession("nightly sync", "abc")
	s, mirror := syncerFor(w), partnersync.Mirror{}
	agencies, err := s.Agencies(ctx)
	if err != nil || len(agencies) == 0 || agencies[0].AgencyID != agency {
		t.Fatalf("agencies %+v, error %v: want %d first", agencies, err, agency)
	}
	if _, err := s.SyncAgency(ctx, agency, mirror, ""); err != nil {
		t.Fatal(err)
	}
	stored := make([]agencysandbox.MirrorClient, 0, len(mirror))
	for n, modified := range mirror {
		stored = append(stored, agencysandbox.MirrorClient{ClientNumber: n, Modified: modified})
	}
	w.SendMirror(session.ID, agency, stored)
	w.EndSession(session.ID)
	report := w.Report(session.ID)
	if report.Verdict != "pass" || report.Session.Recorded < 3 {
		t.Fatalf("verdict %s over %d requests, findings %+v: want pass", report.Verdict, report.Session.Recorded, report.Findings)
	}
	signature, err := agencysandbox.VerifyReport(report.Raw, []byte(key.PublicKey))
	if err != nil {
		t.Fatalf("the report does not verify: %v", err)
	}
	if report.World.ID != w.ID || signature.KeyID != key.KeyID || report.Evidence.Listings == 0 || report.JudgedBy.Build == "" {
		t.Fatalf("world %+v, evidence %+v, judged by %s, signature %+v: want world %s, key %s", report.World, report.Evidence, report.JudgedBy.Build, signature, w.ID, key.KeyID)
	}
	tampered := bytes.Replace(report.Raw, []byte(`"verdict":"pass"`), []byte(`"verdict":"fail"`), 1)
	if _, err := agencysandbox.VerifyReport(tampered, []byte(key.PublicKey)); err == nil {
		t.Fatal("a changed verdict still verifies")
	}
	duplicated := bytes.Replace(report.Raw, []byte(`{"coverage"`), []byte(`{"verdict":"pass","coverage"`), 1)
	if _, err := agencysandbox.VerifyReport(duplicated, []byte(key.PublicKey)); err == nil || bytes.Equal(duplicated, report.Raw) {
		t.Fatalf("a report with a key twice still verifies (%v)", err)
	}
}

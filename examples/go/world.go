package agencysandbox

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DemoIntegration is the demo fixture's integration, documented as abc:123. Only the default
// world is reached with it; a created world answers the credentials of its own integrations.
var DemoIntegration = Integration{ClientID: "abc", ClientSecret: "123", Name: "Demo Partner"}

// Integration is a partner integration's credentials in a world: the Basic-auth Client Id (which
// ends with @<world id> in a created world) and Client Secret.
type Integration struct {
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	Name         string `json:"name"`
}

// SandboxWorld is one world of a sandbox: its data, clock, faults, journal and examiner sessions,
// reached by its own credentials. Its methods fail the test that made it (call them from that
// test's goroutine); Control answers an error instead.
type SandboxWorld struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	ExpiresAt    *string       `json:"expiresAt"`
	Integrations []Integration `json:"integrations"`
	// Token opens this world's control routes when the sandbox has a control token.
	Token string `json:"token"`
	// Sandbox is the sandbox the world lives in.
	Sandbox *Sandbox `json:"-"`

	tb     testing.TB
	prefix string
}

// WorldOption changes what World creates.
type WorldOption func(map[string]any)

// WithFixture starts the world from a fixture document (fixtures/schema.json) instead of the start-up fixture.
func WithFixture(fixture any) WorldOption { return func(b map[string]any) { b["fixture"] = fixture } }

// CopyOf starts the world as a copy of another world's data as it stands ("default" or a world id).
func CopyOf(worldID string) WorldOption { return func(b map[string]any) { b["from"] = worldID } }

// WithTTL sets the idle seconds after which the sandbox deletes the world (default 600; 0 keeps it).
func WithTTL(seconds int) WorldOption { return func(b map[string]any) { b["ttlSeconds"] = seconds } }

// World creates a world of the test binary's sandbox (see Shared) for this test, deleted when the
// test ends; the sandbox also deletes it after 600 idle seconds, should this process die first.
func World(t testing.TB, options ...WorldOption) *SandboxWorld {
	t.Helper()
	s := Shared(t)
	name := t.Name()
	if len(name) > 100 {
		name = name[:100]
	}
	body := map[string]any{"name": name, "ttlSeconds": 600}
	for _, option := range options {
		option(body)
	}
	w := &SandboxWorld{Sandbox: s, tb: t}
	if err := s.control(context.Background(), http.MethodPost, "/_sandbox/worlds", body, w); err != nil {
		t.Fatalf("creating a world: %v", err)
	}
	w.prefix = "/_sandbox/worlds/" + url.PathEscape(w.ID)
	t.Cleanup(func() {
		if err := w.Delete(); err != nil {
			t.Errorf("deleting world %s: %v", w.ID, err)
		}
	})
	return w
}

// DefaultWorld is the sandbox's default world, reached with the demo credentials. Tests that use it
// share it: run them one at a time and Reset it first.
func (s *Sandbox) DefaultWorld(t testing.TB) *SandboxWorld {
	return &SandboxWorld{ID: "default", Name: "default", Integrations: []Integration{DemoIntegration}, Sandbox: s, tb: t, prefix: "/_sandbox"}
}

// Integration is the world's copy of the integration clientID (e.g. "abc", or "abc@<world id>"),
// with the Client Id and Client Secret the sandbox answered when it created the world.
func (w *SandboxWorld) Integration(clientID string) Integration {
	w.tb.Helper()
	known := make([]string, 0, len(w.Integrations))
	for _, integration := range w.Integrations {
		if integration.ClientID == clientID || integration.ClientID == clientID+"@"+w.ID {
			return integration
		}
		known = append(known, integration.ClientID)
	}
	w.tb.Fatalf("world %s has no integration %s; it has %s", w.ID, clientID, strings.Join(known, ", "))
	return Integration{}
}

// VendorURL is the base URL of the vendor API your integration calls (the same for every world:
// the Client Id chooses the world).
func (w *SandboxWorld) VendorURL() string { return w.Sandbox.URL + "/vendor" }

// Authorization is the header value your integration sends to reach this world as clientID.
func (w *SandboxWorld) Authorization(clientID string) string {
	w.tb.Helper()
	i := w.Integration(clientID)
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(i.ClientID+":"+i.ClientSecret))
}

// Control sends one control call of this world (path after /_sandbox/worlds/<id>, e.g. "/clock")
// and decodes the answer into out (when not nil; a *[]byte gets the bytes as they came).
func (w *SandboxWorld) Control(method, path string, body, out any) error {
	token := w.Sandbox.Token
	if token == "" {
		token = w.Token
	}
	return w.Sandbox.send(context.Background(), method, w.prefix+path, token, body, out)
}

func (w *SandboxWorld) call(method, path string, body, out any) {
	w.tb.Helper()
	if err := w.Control(method, path, body, out); err != nil {
		w.tb.Fatal(err)
	}
}

// Delete deletes the world: its credentials answer 401 from then on. A world already gone is fine.
func (w *SandboxWorld) Delete() error {
	err := w.Sandbox.control(context.Background(), http.MethodDelete, "/_sandbox/worlds/"+url.PathEscape(w.ID), nil, nil)
	var answered *ControlError
	if errors.As(err, &answered) && answered.Status == http.StatusNotFound {
		return nil
	}
	return err
}

// Reset returns the world to its start: data, pending writes, journal, faults, clock, simulator
// and rate windows; keep names parts to leave as they are (e.g. "journal", "faults", "clock").
func (w *SandboxWorld) Reset(keep ...string) {
	w.tb.Helper()
	var body any
	if len(keep) > 0 {
		body = map[string]any{"keep": keep}
	}
	w.call(http.MethodPost, "/reset", body, nil)
}

// Fault is a fault rule: which requests it matches and what they get instead.
type Fault struct {
	Match       FaultMatch  `json:"match"`
	Effect      FaultEffect `json:"effect"`
	Times       int         `json:"times,omitempty"`
	Every       int         `json:"every,omitempty"`
	Probability float64     `json:"probability,omitempty"`
}

// FaultMatch selects requests; an empty field matches any. Path is a glob (* within a segment, ** across).
type FaultMatch struct {
	Method   string `json:"method,omitempty"`
	Path     string `json:"path,omitempty"`
	Version  string `json:"version,omitempty"`
	ClientID string `json:"clientId,omitempty"`
	AgencyID int    `json:"agencyId,omitempty"`
}

// FaultEffect is what a matched request gets: a status (with a body and headers), a delay, or a
// dropped connection (DropAnswer: the request is handled, then its answer lost).
type FaultEffect struct {
	Status     int               `json:"status,omitempty"`
	Body       any               `json:"body,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	DelayMs    int               `json:"delayMs,omitempty"`
	Drop       bool              `json:"drop,omitempty"`
	DropAnswer bool              `json:"dropAnswer,omitempty"`
}

// FaultRule is a fault rule as the sandbox keeps it, with its counts.
type FaultRule struct {
	Fault
	ID        string `json:"id"`
	Matched   int    `json:"matched"`
	Hits      int    `json:"hits"`
	Exhausted bool   `json:"exhausted"`
}

// AddFault adds a fault rule to this world.
func (w *SandboxWorld) AddFault(fault Fault) FaultRule {
	w.tb.Helper()
	var rule FaultRule
	w.call(http.MethodPost, "/faults", fault, &rule)
	return rule
}

// Faults lists this world's fault rules with their counts.
func (w *SandboxWorld) Faults() []FaultRule {
	w.tb.Helper()
	var rules []FaultRule
	w.call(http.MethodGet, "/faults", nil, &rules)
	return rules
}

// ClearFaults removes every fault rule of this world.
func (w *SandboxWorld) ClearFaults() {
	w.tb.Helper()
	w.call(http.MethodDelete, "/faults", nil, nil)
}

// Clock is a world's clock: what time it says, and whether it stands still.
type Clock struct {
	Now    time.Time `json:"now"`
	Frozen bool      `json:"frozen"`
}

// SetClock sets this world's clock to now, frozen (it stands still) or running from there.
func (w *SandboxWorld) SetClock(now time.Time, frozen bool) Clock {
	w.tb.Helper()
	var clock Clock
	w.call(http.MethodPut, "/clock", map[string]any{"now": now.UTC().Format(time.RFC3339Nano), "frozen": frozen}, &clock)
	return clock
}

// AdvanceClock moves this world's clock forward (frozen or not).
func (w *SandboxWorld) AdvanceClock(by time.Duration) Clock {
	w.tb.Helper()
	var clock Clock
	w.call(http.MethodPost, "/clock/advance", map[string]any{"seconds": by.Seconds()}, &clock)
	return clock
}

// Clock reads this world's clock.
func (w *SandboxWorld) Clock() Clock {
	w.tb.Helper()
	var clock Clock
	w.call(http.MethodGet, "/clock", nil, &clock)
	return clock
}

// RealClock returns this world's clock to real time, running.
func (w *SandboxWorld) RealClock() Clock {
	w.tb.Helper()
	var clock Clock
	w.call(http.MethodDelete, "/clock", nil, &clock)
	return clock
}

// Request is one vendor request of the world's journal.
type Request struct {
	ID          int               `json:"id"`
	Time        string            `json:"time"`
	Method      string            `json:"method"`
	Path        string            `json:"path"`
	Version     string            `json:"version"`
	Query       map[string]any    `json:"query"`
	Integration string            `json:"integration"`
	AgencyID    int               `json:"agencyId"`
	Status      int               `json:"status"`
	DurationMs  float64           `json:"durationMs"`
	Warnings    []string          `json:"warnings"`
	Body        any               `json:"body"`
	Headers     map[string]string `json:"headers"`
}

// RequestFilter narrows the journal; an empty field does not filter. Path is a glob.
type RequestFilter struct {
	Method   string
	Path     string
	AgencyID int
	Status   int
	Since    string
	Limit    int
}

// Requests lists this world's vendor requests, oldest first.
func (w *SandboxWorld) Requests(filter RequestFilter) []Request {
	w.tb.Helper()
	q := url.Values{}
	for name, value := range map[string]string{"method": filter.Method, "path": filter.Path, "since": filter.Since} {
		if value != "" {
			q.Set(name, value)
		}
	}
	for name, value := range map[string]int{"agencyId": filter.AgencyID, "status": filter.Status, "limit": filter.Limit} {
		if value != 0 {
			q.Set(name, strconv.Itoa(value))
		}
	}
	var requests []Request
	w.call(http.MethodGet, "/requests"+query(q), nil, &requests)
	return requests
}

// Write is a write an integration sent (a log note, a new client, an attachment, ...).
type Write struct {
	Seq          int            `json:"seq"`
	RefID        string         `json:"refId"`
	Kind         string         `json:"kind"`
	Status       string         `json:"status"`
	ClientNumber int            `json:"clientNumber"`
	Integration  string         `json:"integration"`
	Version      string         `json:"version"`
	ReceivedAt   string         `json:"receivedAt"`
	AppliedAt    string         `json:"appliedAt"`
	Data         map[string]any `json:"data"`
}

// Writes lists the writes an agency of this world received; status "pending" or "applied" ("" both).
func (w *SandboxWorld) Writes(agencyID int, status string) []Write {
	w.tb.Helper()
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	var writes []Write
	w.call(http.MethodGet, fmt.Sprintf("/agencies/%d/writes%s", agencyID, query(q)), nil, &writes)
	return writes
}

// PatchAgency changes an agency of this world, e.g. {"connected": false}: its writes are saved (202)
// until it is connected again.
func (w *SandboxWorld) PatchAgency(agencyID int, patch map[string]any) {
	w.tb.Helper()
	w.call(http.MethodPatch, fmt.Sprintf("/agencies/%d", agencyID), patch, nil)
}

// PatchClient changes a client of this world as the agency's staff would (its modified time moves
// to the world's clock), e.g. {"details": {"status": "DeadFile"}}.
func (w *SandboxWorld) PatchClient(agencyID, clientNumber int, patch any) {
	w.tb.Helper()
	w.call(http.MethodPatch, fmt.Sprintf("/agencies/%d/clients/%d", agencyID, clientNumber), patch, nil)
}

func query(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

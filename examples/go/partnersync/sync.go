// Package partnersync stands in for your integration: the small sync a partner writes against the
// Agency Integration API, with nothing of the sandbox in it. It lists the agencies that grant it
// access and an agency's changed clients (all of them on the first sync), reads them in batches of
// 200, drops the deleted ones, and writes log notes; a 429 or 5xx is retried after Retry-After (or
// a short pause), a write under the same RefId.
package partnersync

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Batch is the most clients one batch read asks for (the live service refuses more).
const Batch = 200

// Client is what the sync keeps of a client.
type Client struct {
	ClientNumber int `json:"clientNumber"`
	Details      struct {
		Modified string `json:"modified"`
	} `json:"details"`
}

// Syncer calls the vendor API as one integration.
type Syncer struct {
	BaseURL      string // e.g. https://api.example.com/vendor
	ClientID     string
	ClientSecret string
	HTTP         *http.Client
	Attempts     int // per call, 5 when 0
}

// Mirror is what the integration stored: client number -> modified time.
type Mirror map[int]string

// Agency is an agency that grants the integration access now, with the scopes it granted.
type Agency struct {
	AgencyID int      `json:"agencyId"`
	Scopes   []string `json:"scopes"`
}

// Agencies lists the agencies the integration may work with now; subscriptions change, so a sync
// starts here.
func (s *Syncer) Agencies(ctx context.Context) ([]Agency, error) {
	var agencies []Agency
	err := s.call(ctx, http.MethodGet, "/agencies", url.Values{"version": {"4.0"}}, nil, &agencies)
	return agencies, err
}

// SyncAgency brings mirror up to date with an agency: everything when asOf is "", else what
// changed since asOf. It answers the client numbers it read.
func (s *Syncer) SyncAgency(ctx context.Context, agencyID int, mirror Mirror, asOf string) ([]int, error) {
	list := url.Values{"version": {"4.0"}}
	if asOf != "" {
		list.Set("asOf", asOf)
	}
	var changed []int
	if err := s.call(ctx, http.MethodGet, fmt.Sprintf("/agency/%d/clients", agencyID), list, nil, &changed); err != nil {
		return nil, err
	}
	for start := 0; start < len(changed); start += Batch {
		end := start + Batch
		if end > len(changed) {
			end = len(changed)
		}
		var clients []Client
		body := map[string]any{"clientNumbers": changed[start:end]}
		if err := s.call(ctx, http.MethodPost, fmt.Sprintf("/agency/%d/clients", agencyID), url.Values{"version": {"4.0"}}, body, &clients); err != nil {
			return nil, err
		}
		for _, c := range clients {
			mirror[c.ClientNumber] = c.Details.Modified
		}
	}
	list.Set("deleted", "true")
	var deleted []int
	if err := s.call(ctx, http.MethodGet, fmt.Sprintf("/agency/%d/clients", agencyID), list, nil, &deleted); err != nil {
		return nil, err
	}
	for _, n := range deleted {
		delete(mirror, n)
	}
	return changed, nil
}

// LogNote is a note on a client's activity log.
type LogNote struct {
	RefID   string `json:"refId"`
	TS      string `json:"ts"`
	Channel int    `json:"channel"`
	Note    string `json:"note"`
}

// AddLogNote writes a note to a client's log (a RefId is made when it has none, and kept for every
// retry); it answers the status: 200 written, 202 saved until the agency is connected again.
func (s *Syncer) AddLogNote(ctx context.Context, agencyID, clientNumber int, note LogNote) (int, error) {
	if note.RefID == "" {
		note.RefID = newRefID()
	}
	var status int
	err := s.call(ctx, http.MethodPost, fmt.Sprintf("/agency/%d/client/%d/log", agencyID, clientNumber), url.Values{"version": {"4.0"}}, note, &status)
	return status, err
}

// call sends one request, retried on 429 and 5xx and on a lost answer; out gets the decoded JSON
// (a *int gets the status instead).
func (s *Syncer) call(ctx context.Context, method, path string, q url.Values, body, out any) error {
	var encoded []byte
	if body != nil {
		var err error
		if encoded, err = json.Marshal(body); err != nil {
			return err
		}
	}
	attempts := s.Attempts
	if attempts == 0 {
		attempts = 5
	}
	var last error
	for attempt := 0; attempt < attempts; attempt++ {
		request, err := http.NewRequestWithContext(ctx, method, s.BaseURL+path+"?"+q.Encode(), bytes.NewReader(encoded))
		if err != nil {
			return err
		}
		request.SetBasicAuth(s.ClientID, s.ClientSecret)
		if body != nil {
			request.Header.Set("Content-Type", "application/json")
		}
		response, err := s.HTTP.Do(request)
		if err != nil {
			last = err // the answer was lost: the same request again (a write keeps its RefId)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		answer, err := io.ReadAll(response.Body)
		response.Body.Close()
		if err != nil {
			return err
		}
		if response.StatusCode == http.StatusTooManyRequests || response.StatusCode >= 500 {
			last = fmt.Errorf("%s %s answered %d: %s", method, path, response.StatusCode, answer)
			time.Sleep(retryAfter(response.Header.Get("Retry-After")))
			continue
		}
		if response.StatusCode >= 400 {
			return fmt.Errorf("%s %s answered %d: %s", method, path, response.StatusCode, answer)
		}
		if status, ok := out.(*int); ok {
			*status = response.StatusCode
			return nil
		}
		return json.Unmarshal(answer, out)
	}
	return fmt.Errorf("still failing after %d attempts: %w", attempts, last)
}

func retryAfter(header string) time.Duration {
	if seconds, err := strconv.Atoi(header); err == nil && seconds >= 0 {
		return time.Duration(seconds) * time.Second
	}
	return 100 * time.Millisecond
}

// newRefID is a random UUID (version 4), the RefId of a write.
func newRefID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

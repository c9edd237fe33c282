package agencysandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ControlError is a control call's error answer: the status and the problem body.
type ControlError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *ControlError) Error() string {
	return fmt.Sprintf("%s %s answered %d: %s", e.Method, e.Path, e.Status, e.Body)
}

// Control sends one call to the control API (path from /_sandbox on, e.g. "/_sandbox/worlds"), as
// JSON with the control token, and decodes the answer into out (when not nil). An error status is
// a *ControlError.
func (s *Sandbox) Control(ctx context.Context, method, path string, body, out any) error {
	return s.control(ctx, method, path, body, out)
}

func (s *Sandbox) control(ctx context.Context, method, path string, body, out any) error {
	return s.send(ctx, method, path, s.Token, body, out)
}

func (s *Sandbox) send(ctx context.Context, method, path, token string, body, out any) error {
	var reader io.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reader = bytes.NewReader(encoded)
	}
	request, err := http.NewRequestWithContext(ctx, method, s.URL+path, reader)
	if err != nil {
		return err
	}
	request.Header.Set("Accept", "application/json")
	if body != nil {
		request.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		request.Header.Set("Authorization", "Bearer "+token)
	}
	response, err := s.HTTP.Do(request)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(response.Body, 64<<20))
	if err != nil {
		return err
	}
	if response.StatusCode >= 400 {
		return &ControlError{Method: method, Path: path, Status: response.StatusCode, Body: strings.TrimSpace(string(answer))}
	}
	if out == nil || len(answer) == 0 {
		return nil
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = answer
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON expected: %w", method, path, err)
	}
	return nil
}

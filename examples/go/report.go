package agencysandbox

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Session is an examiner session: it records a world's vendor requests (of one integration, or of
// all when ClientID is nil) and judges them rule by rule once ended.
type Session struct {
	ID        int     `json:"id"`
	Name      string  `json:"name"`
	ClientID  *string `json:"clientId"`
	StartedAt string  `json:"startedAt"`
	EndedAt   string  `json:"endedAt"`
	Recorded  int     `json:"recorded"`
	Capped    bool    `json:"capped"`
}

// MirrorClient is one client as the integration stored it.
type MirrorClient struct {
	ClientNumber int    `json:"clientNumber"`
	Modified     string `json:"modified"`
}

// Finding is one rule the recorded requests broke (or a note about them).
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Count    int    `json:"count"`
	Message  string `json:"message"`
	Fix      string `json:"fix"`
}

// Evidence is what a run gave the examiner to judge: without a request, or without a listing or a
// client read, the verdict is no-evidence.
type Evidence struct {
	Requests    int `json:"requests"`
	Listings    int `json:"listings"`
	ClientReads int `json:"clientReads"`
}

// RuleOutcome is one rule the examiner evaluated: pass, fail, warn or not-exercised.
type RuleOutcome struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
}

// JudgedBy names the code and the rules that judged the run (inside what is signed).
type JudgedBy struct {
	Version      string        `json:"version"`
	Build        string        `json:"build"`
	RulesVersion int           `json:"rulesVersion"`
	Rules        []RuleOutcome `json:"rules"`
}

// Tenant is the tenant that owns a world.
type Tenant struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ReportWorld names the world the run was judged in and what its data started from.
type ReportWorld struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Tenant      *Tenant `json:"tenant"`
	StartDigest string  `json:"startDigest"`
}

// Signer names who holds the key that signed the report (SANDBOX_SIGNER_NAME).
type Signer struct {
	KeyID string `json:"keyId"`
	Name  string `json:"name"`
}

// Report is an examiner report (the fields a test reads most; Raw holds all of it, as signed).
// Verdict is pass, warn, fail or no-evidence (the run gave nothing to judge: never a pass).
type Report struct {
	Session   Session     `json:"session"`
	Verdict   string      `json:"verdict"`
	Evidence  Evidence    `json:"evidence"`
	Findings  []Finding   `json:"findings"`
	JudgedBy  JudgedBy    `json:"judgedBy"`
	World     ReportWorld `json:"world"`
	Signer    *Signer     `json:"signer"`
	Signature *Signature  `json:"signature"`
	// Raw is the report's JSON as the sandbox answered it: what VerifyReport checks.
	Raw []byte `json:"-"`
}

// Signature is the signature block of an ended session's report, when the sandbox has a signing
// key (SANDBOX_SIGNING_KEY, or serve --signing-key). It holds these members and no others.
type Signature struct {
	Algorithm string `json:"algorithm"`
	KeyID     string `json:"keyId"`
	SignedAt  string `json:"signedAt"`
	Final     bool   `json:"final"`
	Value     string `json:"value"`
}

// StartSession starts recording this world's vendor requests: of the integration clientID ("abc"
// is this world's copy of abc), or of every integration when clientID is "".
func (w *SandboxWorld) StartSession(name, clientID string) Session {
	w.tb.Helper()
	body := map[string]any{"name": name}
	if clientID != "" {
		body["clientId"] = w.Integration(clientID).ClientID
	}
	var session Session
	w.call(http.MethodPost, "/sessions", body, &session)
	return session
}

// SendMirror declares what the integration stored for an agency after its sync; the report
// compares it with the agency's clients.
func (w *SandboxWorld) SendMirror(sessionID, agencyID int, clients []MirrorClient) {
	w.tb.Helper()
	w.call(http.MethodPost, fmt.Sprintf("/sessions/%d/mirror", sessionID), map[string]any{"agencyId": agencyID, "clients": clients}, nil)
}

// EndSession stops recording; the report is made now and kept (and signed, with a signing key).
func (w *SandboxWorld) EndSession(sessionID int) {
	w.tb.Helper()
	w.call(http.MethodPost, fmt.Sprintf("/sessions/%d/end", sessionID), nil, nil)
}

// Report is a session's report (JSON), with its bytes as answered in Raw.
func (w *SandboxWorld) Report(sessionID int) Report {
	w.tb.Helper()
	var raw []byte
	w.call(http.MethodGet, fmt.Sprintf("/sessions/%d/report", sessionID), nil, &raw)
	var report Report
	if err := json.Unmarshal(raw, &report); err != nil {
		w.tb.Fatalf("the report of session %d is not a report: %v", sessionID, err)
	}
	report.Raw = raw
	return report
}

// SigningKey is the public key the sandbox signs reports with.
type SigningKey struct {
	Algorithm string `json:"algorithm"`
	KeyID     string `json:"keyId"`
	// PublicKey is PEM (BEGIN PUBLIC KEY).
	PublicKey string `json:"publicKey"`
}

// SigningKey answers the sandbox's public key; a *ControlError with status 404 when it signs none.
func (s *Sandbox) SigningKey(ctx context.Context) (SigningKey, error) {
	var key SigningKey
	err := s.control(ctx, http.MethodGet, "/_sandbox/signing-key", nil, &key)
	return key, err
}

// VerifyReport checks a signed report (its JSON as answered) with the sandbox's public key (PEM):
// Ed25519 over the RFC 8785 canonical JSON of the report without signature.value. It answers the
// signature block of a valid report, or why the report is not valid.
func VerifyReport(raw []byte, publicKeyPEM []byte) (*Signature, error) {
	keyBlock, _ := pem.Decode(publicKeyPEM)
	if keyBlock == nil {
		return nil, errors.New("the key is not PEM (BEGIN PUBLIC KEY)")
	}
	parsed, err := x509.ParsePKIXPublicKey(keyBlock.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the key is not a public key: %w", err)
	}
	publicKey, ok := parsed.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the key is a %T, not Ed25519", parsed)
	}
	keyID := sha256.Sum256(keyBlock.Bytes)
	var report map[string]any
	decoder := json.NewDecoder(bytes.NewReader(raw))
	if err := decoder.Decode(&report); err != nil {
		return nil, fmt.Errorf("the report is not a JSON object: %w", err)
	}
	// Served reports are canonical JSON: a file that is not byte for byte its own canonical form
	// has been changed, or repeats a key (which readers of the file would resolve differently).
	var served bytes.Buffer
	if err := canonical(&served, report); err != nil {
		return nil, err
	}
	if !bytes.Equal(served.Bytes(), raw) {
		return nil, errors.New("the report is not byte for byte its canonical form (RFC 8785), as the sandbox serves it: it was changed, or a key appears twice")
	}
	signatureBlock, _ := report["signature"].(map[string]any)
	if signatureBlock == nil {
		return nil, errors.New("the report has no signature: the sandbox signs the reports of ended sessions when it has a signing key")
	}
	for name := range signatureBlock {
		switch name {
		case "algorithm", "final", "keyId", "signedAt", "value":
		default:
			return nil, fmt.Errorf("its signature block holds %q, which no signature holds", name)
		}
	}
	var signature Signature
	encoded, _ := json.Marshal(signatureBlock)
	if err := json.Unmarshal(encoded, &signature); err != nil {
		return nil, fmt.Errorf("its signature block is not one: %w", err)
	}
	if !signature.Final {
		return nil, errors.New("its signature block is not a final report's (final: true)")
	}
	signer, _ := report["signer"].(map[string]any)
	if signer == nil || signer["keyId"] != signature.KeyID {
		return nil, errors.New("its signer does not name the key that signed it")
	}
	if signature.Algorithm != "Ed25519" {
		return nil, fmt.Errorf("it is signed with %q, not Ed25519", signature.Algorithm)
	}
	if signature.KeyID != hex.EncodeToString(keyID[:]) {
		return nil, fmt.Errorf("it is signed by the key %s, not by the key given (%s)", signature.KeyID, hex.EncodeToString(keyID[:]))
	}
	value, err := base64.StdEncoding.DecodeString(signature.Value)
	if err != nil || len(value) != ed25519.SignatureSize {
		return nil, errors.New("its signature value is not an Ed25519 signature: it was changed")
	}
	delete(signatureBlock, "value")
	var signed bytes.Buffer
	if err := canonical(&signed, report); err != nil {
		return nil, err
	}
	if !ed25519.Verify(publicKey, signed.Bytes(), value) {
		return nil, errors.New("the signature does not match the content: the report was changed after it was signed")
	}
	return &signature, nil
}

// canonical writes a JSON value decoded by encoding/json as RFC 8785 (JCS) has it: members sorted
// by their names' UTF-16 code units, numbers as ECMAScript prints them, strings with the fewest escapes.
func canonical(out *bytes.Buffer, value any) error {
	switch v := value.(type) {
	case nil:
		out.WriteString("null")
	case bool:
		out.WriteString(strconv.FormatBool(v))
	case float64:
		return canonicalNumber(out, v)
	case string:
		return canonicalString(out, v)
	case []any:
		out.WriteByte('[')
		for i, item := range v {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := canonical(out, item); err != nil {
				return err
			}
		}
		out.WriteByte(']')
	case map[string]any:
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		sort.Slice(names, func(i, j int) bool { return lessUTF16(names[i], names[j]) })
		out.WriteByte('{')
		for i, name := range names {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := canonicalString(out, name); err != nil {
				return err
			}
			out.WriteByte(':')
			if err := canonical(out, v[name]); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	default:
		return fmt.Errorf("%T is not a JSON value", value)
	}
	return nil
}

func lessUTF16(a, b string) bool {
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return len(x) < len(y)
}

// canonicalNumber: encoding/json already prints a float64 as ECMAScript's Number.prototype.toString
// does (shortest round trip; exponent below 1e-6 and from 1e21); JCS adds -0 as 0.
func canonicalNumber(out *bytes.Buffer, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return errors.New("a number that is not finite has no canonical form")
	}
	if v == 0 {
		out.WriteByte('0')
		return nil
	}
	text, err := json.Marshal(v)
	out.Write(text)
	return err
}

func canonicalString(out *bytes.Buffer, s string) error {
	if !utf8.ValidString(s) {
		return errors.New("a string that is not UTF-8 has no canonical form")
	}
	out.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(out, `\u%04x`, r)
			} else {
				out.WriteRune(r)
			}
		}
	}
	out.WriteByte('"')
	return nil
}

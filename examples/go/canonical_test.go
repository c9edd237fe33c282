package agencysandbox

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The canonical form reports are signed in, RFC 8785: its own examples of member order and numbers.
func TestCanonicalJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Dalet","1":"One","\ud83d\ude00":"Emoji","\u0080":"Control","\u00f6":"o"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"o\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji\",\"\ufb33\":\"Dalet\"}"},
		{`[0,-0,1e21,1e-7,333333333.3333333,9007199254740992,5e-324,-1.7976931348623157e308,295147905179352830000,1e23,0.000001,100]`,
			`[0,0,1e+21,1e-7,333333333.3333333,9007199254740992,5e-324,-1.7976931348623157e+308,295147905179352830000,1e+23,0.000001,100]`},
		{`{"s":"\u0000\u001f\b\t\n\f\r\"\\/\u007f\u2028<>&\u00e9","b":[true,false,null,[],{}]}`,
			"{\"b\":[true,false,null,[],{}],\"s\":\"\\u0000\\u001f\\b\\t\\n\\f\\r\\\"\\\\/\u007f\u2028<>&\u00e9\"}"},
	} {
		var value any
		if err := json.Unmarshal([]byte(c.in), &value); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := canonical(&out, value); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Errorf("canonical(%s)\n got %s\nwant %s", c.in, out.String(), c.want)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	got := SplitCommand(`node "/path with spaces/cli.js" '' --flag`)
	want := []string{"node", "/path with spaces/cli.js", "", "--flag"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

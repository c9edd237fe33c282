package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// encoding/json stops at the first value of the wrong type and names it without array indices.
// typeMismatches walks the same Go types over the generic JSON to list every such value with
// its full path, so that one run shows all of them.

var rawMessage = reflect.TypeOf(json.RawMessage{})

func typeMismatches(body []byte, t reflect.Type) []failure {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v interface{}
	if err := dec.Decode(&v); err != nil {
		return []failure{{"$", "not JSON: " + err.Error()}}
	}
	var out []failure
	walk(v, t, "$", &out)
	return out
}

func jsonKind(v interface{}) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case []interface{}:
		return "array"
	default:
		return "object"
	}
}

func walk(v interface{}, t reflect.Type, path string, out *[]failure) {
	if v == nil {
		return // absent or null: check.go decides whether the field may be
	}
	mismatch := func(want string) {
		*out = append(*out, failure{path, fmt.Sprintf("a JSON %s where %s is expected", jsonKind(v), want)})
	}
	if t == rawMessage {
		return
	}
	switch t.Kind() {
	case reflect.Ptr:
		walk(v, t.Elem(), path, out)
	case reflect.String:
		if _, ok := v.(string); !ok {
			mismatch("a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			mismatch("a boolean")
		}
	case reflect.Int32:
		n, ok := v.(json.Number)
		if !ok {
			mismatch("a 32-bit integer")
		} else if _, err := strconv.ParseInt(string(n), 10, 32); err != nil {
			*out = append(*out, failure{path, fmt.Sprintf("%s is not a 32-bit integer", n)})
		}
	case reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			mismatch("a number")
		}
	case reflect.Slice:
		items, ok := v.([]interface{})
		if !ok {
			mismatch("an array")
			return
		}
		for i, item := range items {
			at := fmt.Sprintf("%s[%d]", path, i)
			if item == nil {
				// encoding/json would make it a zero value; a typed list holds no null item
				*out = append(*out, failure{at, "a null item in a list"})
			}
			walk(item, t.Elem(), at, out)
		}
	case reflect.Map:
		if _, ok := v.(map[string]interface{}); !ok {
			mismatch("an object")
		}
	case reflect.Struct:
		fields, ok := v.(map[string]interface{})
		if !ok {
			mismatch("an object")
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			value, found := lookup(fields, name)
			if !found {
				continue
			}
			// a member declared non-nullable (C#'s int Priority): absent takes its default, null throws
			if declared := f.Tag.Get("nonnull"); value == nil && declared != "" {
				*out = append(*out, failure{path + "." + name, "null, but " + declared + " is not nullable"})
				continue
			}
			walk(value, f.Type, path+"."+name, out)
		}
	default:
		panic("no rule for " + t.String())
	}
}

// lookup finds a key as encoding/json does: the exact name, else one in another case.
func lookup(fields map[string]interface{}, name string) (interface{}, bool) {
	if v, ok := fields[name]; ok {
		return v, true
	}
	for k, v := range fields {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

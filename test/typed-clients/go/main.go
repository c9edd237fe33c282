// Command decoder is a typed client of the Agency Integration API written in Go: it decodes
// every answer of a JSON-lines file ({label, operation, version, body} per line) with
// encoding/json into the structs of model.go and model_v1.go, typed from the contract's
// section A, checks the non-optional fields and the formats (check.go, validate.go), prints
// the answers decoded per operation and version, and exits 1 listing the failures.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

type answer struct {
	Label     string          `json:"label"`
	Operation string          `json:"operation"`
	Version   string          `json:"version"`
	Body      json.RawMessage `json:"body"`
}

// decode is what a typed client does with one answer: decode it into T, then check it.
func decode[T any](body []byte, check func(*T, *checker)) []failure {
	var v T
	err := json.Unmarshal(body, &v)
	failures := typeMismatches(body, reflect.TypeOf(v))
	if err != nil && len(failures) == 0 {
		failures = append(failures, failure{"$", err.Error()})
	}
	c := &checker{}
	if check != nil {
		check(&v, c)
	}
	return append(failures, c.failures...)
}

func list[T any](each func(*T, *checker, string)) func(*[]T, *checker) {
	return func(v *[]T, c *checker) {
		if *v == nil {
			c.fail("$", "null where an array is expected")
		}
		for i := range *v {
			each(&(*v)[i], c, at("$", i))
		}
	}
}

func decodeAnswer(a answer) ([]failure, bool) {
	ids := func(v *[]int32, c *checker) {
		if *v == nil {
			c.fail("$", "null where an array is expected")
		}
	}
	switch a.Operation + " " + a.Version {
	case "agencies 4.0":
		return decode(a.Body, list(func(v *AgencyV4, c *checker, p string) { v.check(c, p) })), true
	case "agencies 3.0", "agencies 1", "changedClients 4.0", "changedClients 3.0", "changedClients 1":
		return decode(a.Body, ids), true
	case "offices 4.0":
		return decode(a.Body, list(func(v *Office, c *checker, p string) { v.check(c, p, true) })), true
	case "offices 3.0", "offices 1":
		return decode(a.Body, list(func(v *Office, c *checker, p string) { v.check(c, p, false) })), true
	case "users 4.0":
		return decode(a.Body, list(func(v *User, c *checker, p string) { v.check(c, p) })), true
	case "getClient 4.0", "getClient 3.0":
		return decode(a.Body, func(v *Client, c *checker) { v.check(c, "$") }), true
	case "getClient 1":
		return decode(a.Body, func(v *ClientV1, c *checker) { v.check(c, "$") }), true
	case "batchClients 4.0", "batchClients 3.0", "searchClients 4.0", "searchClients 3.0":
		return decode(a.Body, list(func(v *Client, c *checker, p string) { v.check(c, p) })), true
	case "batchClients 1":
		return decode(a.Body, list(func(v *ClientV1, c *checker, p string) { v.check(c, p) })), true
	}
	return nil, false
}

var (
	indices = regexp.MustCompile(`\[\d+\]`)
	quoted  = regexp.MustCompile(`"[^"]*"`)
	number  = regexp.MustCompile(`^-?[0-9.eE+-]+ is not`)
)

// kind groups failures that differ only in indices and values.
func kind(f failure) string {
	message := number.ReplaceAllString(quoted.ReplaceAllString(f.message, `"…"`), "N is not")
	return indices.ReplaceAllString(f.path, "[*]") + ": " + message
}

func main() {
	args := os.Args[1:]
	// --every-failure lists every failure instead of the first 20
	limit := 20
	if len(args) == 2 && args[0] == "--every-failure" {
		limit, args = -1, args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: decoder [--every-failure] ANSWERS.jsonl")
		os.Exit(2)
	}
	file, err := os.Open(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)

	type tally struct{ decoded, failed int }
	tallies := map[string]*tally{}
	var first []string
	kinds := map[string]int{}
	kindExample := map[string]string{}
	answers, failedAnswers := 0, 0
	for scanner.Scan() {
		var a answer
		if err := json.Unmarshal(scanner.Bytes(), &a); err != nil {
			fmt.Fprintf(os.Stderr, "line %d is not an answer: %v\n", answers+1, err)
			os.Exit(2)
		}
		answers++
		key := a.Operation + " " + a.Version
		if tallies[key] == nil {
			tallies[key] = &tally{}
		}
		failures, known := decodeAnswer(a)
		if !known {
			failures = []failure{{"$", "no decoder for operation " + key}}
		}
		if len(failures) == 0 {
			tallies[key].decoded++
			continue
		}
		tallies[key].failed++
		failedAnswers++
		for _, f := range failures {
			k := kind(f)
			if kinds[k] == 0 {
				kindExample[k] = a.Label
			}
			kinds[k]++
			if limit < 0 || len(first) < limit {
				first = append(first, fmt.Sprintf("  %s  %s: %s", a.Label, f.path, f.message))
			}
		}
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}

	fmt.Printf("go (encoding/json): %d answers, %d decoded, %d failed\n", answers, answers-failedAnswers, failedAnswers)
	keys := make([]string, 0, len(tallies))
	for k := range tallies {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %-20s %6d decoded %6d failed\n", k, tallies[k].decoded, tallies[k].failed)
	}
	if failedAnswers == 0 {
		return
	}
	fmt.Printf("distinct failures (%d):\n", len(kinds))
	distinct := make([]string, 0, len(kinds))
	for k := range kinds {
		distinct = append(distinct, k)
	}
	sort.Strings(distinct)
	for _, k := range distinct {
		fmt.Printf("  %6d x %s  (first in %s)\n", kinds[k], k, kindExample[k])
	}
	fmt.Println("first failures:")
	fmt.Println(strings.Join(first, "\n"))
	os.Exit(1)
}

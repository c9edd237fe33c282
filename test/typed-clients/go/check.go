package main

import (
	"fmt"
	"regexp"
	"time"
)

// What encoding/json does not check by itself: that the fields the client model marks
// non-optional are present (and not null), and the formats typed clients parse strings with
// (Guid, DateTime with and without a zone, DateOnly, the spec's enumerations).

var (
	guidPattern     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	utcPattern      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?Z$`)
	localPattern    = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?$`)
	dateOnlyPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	datePrefix      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}`)
)

var (
	clientStatuses   = []string{"Active", "DeadFile", "Prospect", "Lead"}
	businessTypes    = []string{"None", "Corporation", "IndividualOrSoleProprietor", "SubchapterS", "LLC", "Partnership", "JointVenture", "NonProfit", "FamilyTrust"}
	contactTypes     = []string{"None", "WorkPhone", "WorkEmail", "CellPhone", "HomePhone", "HomeEmail", "OtherPhone", "OtherEmail", "MessagePhone", "Pager", "Fax", "SocialMedia", "ClientWebsite", "OtherWebsite"}
	mainContactTypes = []string{"None", "First", "Second", "Other"}
	applicationTypes = []string{"Undefined", "Agricultural", "Commercial", "EmployeeBenefits", "Health", "Life", "Other", "Personal", "SuretyBond", "Platform"}
)

// failure is one value a typed client could not take, at a JSON path of one answer.
type failure struct {
	path    string
	message string
}

type checker struct {
	failures []failure
}

func (c *checker) fail(path, format string, args ...interface{}) {
	c.failures = append(c.failures, failure{path, fmt.Sprintf(format, args...)})
}

// need fails when a non-optional field is missing or null.
func need[T any](c *checker, path string, value *T) bool {
	if value == nil {
		c.fail(path, "required, but missing or null")
		return false
	}
	return true
}

// text checks a string's format when it is there; required ones must be there.
func (c *checker) text(path string, value *string, required bool, format string) {
	if value == nil {
		if required {
			c.fail(path, "required, but missing or null")
		}
		return
	}
	s := *value
	ok := true
	switch format {
	case "guid":
		ok = guidPattern.MatchString(s)
	case "utc":
		ok = utcPattern.MatchString(s) && realInstant(s)
	case "local":
		ok = localPattern.MatchString(s) && realInstant(s)
	case "date":
		ok = dateOnlyPattern.MatchString(s) && realInstant(s)
	case "date-prefix":
		ok = datePrefix.MatchString(s) && realInstant(s)
	case "":
	default:
		panic("unknown format " + format)
	}
	if !ok {
		c.fail(path, "%q is not a %s", s, formatNames[format])
	}
}

var formatNames = map[string]string{
	"guid":        "GUID",
	"utc":         "UTC date-time ending in Z",
	"local":       "date-time without a zone (yyyy-mm-ddThh:mm:ss)",
	"date":        "date (yyyy-mm-dd)",
	"date-prefix": "date or date-time",
}

// realInstant: the date part is a real calendar day, as DateTime.Parse requires.
func realInstant(s string) bool {
	_, err := time.Parse("2006-01-02", s[:10])
	return err == nil
}

func (c *checker) oneOf(path string, value *string, required bool, values []string) {
	if value == nil {
		if required {
			c.fail(path, "required, but missing or null")
		}
		return
	}
	for _, v := range values {
		if *value == v {
			return
		}
	}
	c.fail(path, "%q is not one of %v", *value, values)
}

func at(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

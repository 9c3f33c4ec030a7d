package prober

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// limit bounds the scans below: far above any value the library defines.
const limit = 1000

// Every Result and Reason prints the library's name for its value (prober_result_name,
// prober_reason_name, which the prober command prints too), and the Go tables name exactly the
// values the library defines: a value the library adds is caught here until Go names it.
func TestNamesMatchLibrary(t *testing.T) {
	for _, c := range []struct {
		kind, invalid string
		c, goName     func(uint32) string
		tableLen      int
	}{
		{"Result", "invalid result", cResultName, func(v uint32) string { return Result(v).String() }, len(resultNames)},
		{"Reason", "invalid reason", cReasonName, func(v uint32) string { return Reason(v).String() }, len(reasonNames)},
	} {
		v := uint32(0)
		for ; v < limit; v++ {
			want := c.c(v)
			if want == c.invalid {
				break
			}
			if got := c.goName(v); got != want {
				t.Errorf("%s(%d).String() = %q, the library's name is %q", c.kind, v, got, want)
			}
		}
		if int(v) != c.tableLen {
			t.Errorf("the library names %ss 0..%d, the Go table has %d names", c.kind, v, c.tableLen)
		}
		if got, want := c.goName(v), fmt.Sprintf("%s(%d)", c.kind, v); got != want {
			t.Errorf("%s(%d), unknown to the library, prints %q, want %q", c.kind, v, got, want)
		}
	}
	// The names a user sees in logs, spelled out once (they equal the C names, checked above).
	if got := ReasonTooManyRedirects.String(); got != "too_many_redirects" {
		t.Errorf("ReasonTooManyRedirects = %q", got)
	}
	if got := ReasonExitCode.String(); got != "exit_code" {
		t.Errorf("ReasonExitCode = %q", got)
	}
}

// goStatuses is every Status constant of this package, by its C name.
var goStatuses = map[string]Status{
	"PROBER_OK":                  StatusOK,
	"PROBER_E_NULL":              StatusNull,
	"PROBER_E_INVALID":           StatusInvalid,
	"PROBER_E_INVALID_UTF8":      StatusInvalidUTF8,
	"PROBER_E_INVALID_URL":       StatusInvalidURL,
	"PROBER_E_INVALID_HOST":      StatusInvalidHost,
	"PROBER_E_INVALID_PORT":      StatusInvalidPort,
	"PROBER_E_INVALID_HEADER":    StatusInvalidHeader,
	"PROBER_E_INVALID_ARGV":      StatusInvalidArgv,
	"PROBER_E_INVALID_ENV":       StatusInvalidEnv,
	"PROBER_E_INVALID_DURATION":  StatusInvalidDuration,
	"PROBER_E_INVALID_THRESHOLD": StatusInvalidThreshold,
	"PROBER_E_WRONG_KIND":        StatusWrongKind,
	"PROBER_E_UNKNOWN_TARGET":    StatusUnknownTarget,
	"PROBER_E_NO_PROBE":          StatusNoProbe,
	"PROBER_E_INVALID_ENUM":      StatusInvalidEnum,
	"PROBER_E_INVALID_TLS":       StatusInvalidTLS,
	"PROBER_E_RUN_ENDED":         StatusRunEnded,
	"PROBER_E_UNKNOWN_RUN":       StatusUnknownRun,
	"PROBER_E_IO":                StatusIO,
	"PROBER_E_BUSY":              StatusBusy,
	"PROBER_E_PANIC":             StatusPanic,
}

// Every status of the C API has a Go constant: each value of the header's prober_status enum
// (include/prober.h, read as text) and each value the library describes (prober_status_str,
// through Status.String) is one of goStatuses, under the same name.
func TestStatusesMatchLibrary(t *testing.T) {
	header, err := os.ReadFile("include/prober.h") // the header the package is compiled with
	if err != nil {
		t.Fatal(err)
	}
	enum := regexp.MustCompile(`(?s)enum prober_status\b[^{]*\{(.*?)\};`).FindSubmatch(header)
	if enum == nil {
		t.Fatal("no enum prober_status in include/prober.h")
	}
	inHeader := map[string]Status{}
	for _, m := range regexp.MustCompile(`\b(PROBER_(?:OK|E_[A-Z0-9_]+)) = (\d+)`).FindAllSubmatch(enum[1], -1) {
		v, err := strconv.ParseUint(string(m[2]), 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		inHeader[string(m[1])] = Status(v)
	}
	for name, v := range inHeader {
		if got, ok := goStatuses[name]; !ok {
			t.Errorf("%s = %d has no Go Status constant", name, v)
		} else if got != v {
			t.Errorf("%s = %d in the header, %d in Go", name, v, got)
		}
	}
	for name := range goStatuses {
		if _, ok := inHeader[name]; !ok {
			t.Errorf("Go names %s, which the header does not define", name)
		}
	}
	known := map[Status]bool{}
	for _, v := range goStatuses {
		known[v] = true
	}
	unknown := Status(limit + 1).String()
	for v := Status(0); v < limit; v++ {
		if s := v.String(); s != unknown && !known[v] {
			t.Errorf("the library describes status %d (%q), which has no Go constant", v, s)
		} else if s == unknown && known[v] {
			t.Errorf("the library does not describe Go's status %d", v)
		}
	}
}

package history

import (
	"fmt"
	"time"
)

// Wall-clock bounds for FormatTime: a timestamp in [wallFrom, wallTo)
// reads as nanoseconds since the Unix epoch. Below, it is an offset
// (Jepsen's nanoseconds since the test began, a test's small integers);
// nothing a client logs falls outside 2000-2200.
var (
	wallFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	wallTo   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
)

// FormatTime renders a client timestamp for people, in explanations,
// reports, DOT files and the status page: RFC 3339 in UTC with its
// nanoseconds when it reads as wall-clock time
// ("2023-11-14T22:13:20.013317265Z"), the number as recorded otherwise.
// Machine-readable outputs (JSON, the compact notation) keep the number.
func FormatTime(ns int64) string {
	if ns >= wallFrom && ns < wallTo {
		// Nine fraction digits always, so that times in a column line up
		// and compare as text.
		return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
	}
	return fmt.Sprint(ns)
}

// FormatDuration renders a span of client time in ns as a Go duration:
// "1ms", "1.5µs", "0s".
func FormatDuration(ns int64) string { return time.Duration(ns).String() }

// FormatInterval renders a transaction's [start, end] for people: a
// wall-clock start in RFC 3339 and the duration after it
// ("[2023-11-14T22:13:20.013317265Z, +1ms]"), or the two numbers as the
// compact notation writes them ("[110,200]") for offsets.
func FormatInterval(start, end int64) string {
	if start >= wallFrom && start < wallTo && end >= start {
		return "[" + FormatTime(start) + ", +" + FormatDuration(end-start) + "]"
	}
	return fmt.Sprintf("[%d,%d]", start, end)
}

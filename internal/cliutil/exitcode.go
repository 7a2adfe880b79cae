package cliutil

// The exit status rule that `check` and `run` (at the end of its input)
// share. It lives in one function so that the two commands cannot drift
// apart: the README promises that run's code at the end of standard input
// is the one check gives on the same bytes, and a user's pipeline
// (`run < h.jsonl || page`) relies on it.

// Exit statuses, by precedence: an input error beats an anomaly, which
// beats unknown or partial, which beats valid.
const (
	// ExitValid: every transaction was checked and satisfies the level.
	ExitValid = 0
	// ExitAnomaly: at least one anomaly (alert) was proven.
	ExitAnomaly = 1
	// ExitInput is ExitError: usage, input or output error. An input
	// error is a line or event the input rules reject, or an input with
	// no transactions at all.
	ExitInput = ExitError
	// ExitUnknown: not decided (the time budget ran out), or decided on
	// part of the input only (events set aside as late or oversized,
	// Kafka offsets lost, the pinned cap, bodies past retention), with no
	// anomaly found.
	ExitUnknown = 3
)

// Outcome is what checking one input came to, in the terms the exit
// status rule needs. check fills it from its verdict; run from its
// counters at the end of its input.
type Outcome struct {
	// InputErrors counts the transactions the input rules reject (a line
	// that does not decode or breaks a rule of its format, a duplicate
	// id, missing timestamps where the level needs them, a key used as a
	// list and as a register). check stops at the first; run sets each
	// aside, checks everything else and counts them.
	InputErrors uint64
	// Transactions is the number of transactions checked. None is an
	// input error: an empty input, or one whose every transaction was
	// rejected, proves nothing, and reporting it as valid would hide a
	// recorder that wrote nothing or a stream in the wrong format.
	Transactions uint64
	// Anomalies is the number of anomalies (alerts) proven.
	Anomalies uint64
	// Partial: the verdict is unknown, or covers part of the input only,
	// for a reason other than an input error.
	Partial bool
}

// ExitCode is the exit status for o: 2 on an input error or no
// transactions, else 1 on an anomaly, else 3 when unknown or partial,
// else 0.
func (o Outcome) ExitCode() int {
	switch {
	case o.InputErrors > 0 || o.Transactions == 0:
		return ExitInput
	case o.Anomalies > 0:
		return ExitAnomaly
	case o.Partial:
		return ExitUnknown
	}
	return ExitValid
}

package ingest

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/streamcheck/streamcheck/history"
)

// Writers for `streamcheck convert`: native JSON Lines and Jepsen/Elle
// EDN (the peers' formats are written by AppendDBCop and AppendText).
// Each writes what ReadHistory reads back as the same history where the
// target can say it (doc.go, "Peer formats", invariant 6).

// AppendNativeHistory appends h as native JSON Lines, one line per
// transaction.
func AppendNativeHistory(dst []byte, h *history.History) []byte {
	for i := range h.Txns {
		var f *history.Facts
		if h.Facts != nil {
			f = &h.Facts[i]
		}
		dst = AppendNativeFacts(dst, &h.Txns[i], f)
		dst = append(dst, '\n')
	}
	return dst
}

// AppendElleEDN appends h as a Jepsen history in EDN, one operation a
// line. When every transaction has timestamps and a session, each becomes
// an invocation at Start and a completion at End (:ok committed, :fail
// aborted, :info unknown) of process = session, in time order; otherwise
// only completions are written, which ReadHistory reads without timestamps
// (doc.go, "Elle pairing" rule 4). Integer ids become :index; other ids
// cannot be said and are left out (the reader then numbers operations).
// It fails when a session's transactions overlap in time (Jepsen's
// process runs one operation at a time).
func AppendElleEDN(dst []byte, h *history.History) ([]byte, error) {
	timed := true
	intIDs := true
	for i := range h.Txns {
		t := &h.Txns[i]
		if !t.HasTime || !t.HasSession {
			timed = false
		}
		if n, err := strconv.ParseInt(t.ID, 10, 64); err != nil || strconv.FormatInt(n, 10) != t.ID {
			intIDs = false
		}
	}
	if !timed {
		for i := range h.Txns {
			dst = appendElleOp(dst, &h.Txns[i], elleTypeOf(&h.Txns[i]), intIDs, true)
		}
		return dst, nil
	}
	type event struct {
		at     int64
		txn    int
		invoke bool
	}
	evs := make([]event, 0, 2*len(h.Txns))
	for i := range h.Txns {
		evs = append(evs, event{h.Txns[i].Start, i, true}, event{h.Txns[i].End, i, false})
	}
	// Completions before invocations at the same instant, so that a
	// session's next transaction starting when the previous ends pairs;
	// ties otherwise in input order.
	sort.SliceStable(evs, func(a, b int) bool {
		if evs[a].at != evs[b].at {
			return evs[a].at < evs[b].at
		}
		return !evs[a].invoke && evs[b].invoke
	})
	open := make(map[string]int)
	for _, e := range evs {
		t := &h.Txns[e.txn]
		if e.invoke {
			if j, busy := open[t.Session]; busy {
				return nil, cannotSay("elle-edn", t, "start", fmt.Sprintf("runs one operation per process, and session %s's transaction %s is still open", t.Session, h.Txns[j].ID))
			}
			open[t.Session] = e.txn
			dst = appendElleOp(dst, t, ":invoke", intIDs, false)
			continue
		}
		delete(open, t.Session)
		dst = appendElleOp(dst, t, elleTypeOf(t), intIDs, true)
	}
	return dst, nil
}

func elleTypeOf(t *history.Txn) string {
	switch t.Status {
	case history.Aborted:
		return ":fail"
	case history.Unknown:
		return ":info"
	}
	return ":ok"
}

// appendElleOp writes one operation map. An invocation's reads are nil.
func appendElleOp(dst []byte, t *history.Txn, typ string, intIDs, completion bool) []byte {
	dst = append(dst, "{:type "...)
	dst = append(dst, typ...)
	dst = append(dst, ", :f :txn"...)
	if t.HasSession {
		dst = append(dst, ", :process "...)
		dst = appendEDNScalar(dst, processValue(t.Session))
	}
	if t.HasTime {
		dst = append(dst, ", :time "...)
		if completion {
			dst = strconv.AppendInt(dst, t.End, 10)
		} else {
			dst = strconv.AppendInt(dst, t.Start, 10)
		}
	}
	if intIDs {
		dst = append(dst, ", :index "...)
		dst = append(dst, t.ID...)
	}
	dst = append(dst, ", :value ["...)
	for i, op := range t.Ops {
		if i > 0 {
			dst = append(dst, ' ')
		}
		switch op.Kind {
		case history.Write:
			dst = append(dst, "[:w "...)
		case history.Append:
			dst = append(dst, "[:append "...)
		default:
			dst = append(dst, "[:r "...)
		}
		dst = appendEDNScalar(dst, op.Key)
		dst = append(dst, ' ')
		switch {
		case op.Kind == history.Read && !completion:
			dst = append(dst, "nil"...)
		case op.Kind == history.Read && op.IsList:
			dst = append(dst, '[')
			for j, v := range op.List {
				if j > 0 {
					dst = append(dst, ' ')
				}
				dst = appendEDNScalar(dst, v)
			}
			dst = append(dst, ']')
		default:
			dst = appendEDNScalar(dst, op.Value)
		}
		dst = append(dst, ']')
	}
	return append(dst, "]}\n"...)
}

// processValue spells a session as an EDN scalar: an integer when it is
// one (Jepsen's processes are integers), else a string.
func processValue(s string) history.Value {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(n, 10) == s {
		return history.Value(s)
	}
	return history.StringValue(s)
}

// appendEDNScalar writes a canonical value in EDN: numbers, true and false
// as they are, null as nil, strings as EDN strings (a JSON string literal
// is one: EDN reads the same escapes).
func appendEDNScalar(dst []byte, v history.Value) []byte {
	if v == history.Null {
		return append(dst, "nil"...)
	}
	return append(dst, v...)
}

// Helpers of the integer-only peer writers (dbcop, text).

// peerSessions groups a history's transactions by session in order of
// first appearance; a transaction without a session is a session of its
// own. Formats with numbered sessions and no timestamps (dbcop, text,
// AWDIT) can say only this much of the order.
func peerSessions(h *history.History) [][]*history.Txn {
	var out [][]*history.Txn
	at := make(map[string]int)
	for i := range h.Txns {
		t := &h.Txns[i]
		if !t.HasSession {
			out = append(out, []*history.Txn{t})
			continue
		}
		j, ok := at[t.Session]
		if !ok {
			j = len(out)
			at[t.Session] = j
			out = append(out, nil)
		}
		out[j] = append(out[j], t)
	}
	return out
}

// peerInt reads a value as a non-negative integer for the numeric peer
// formats.
func peerInt(v history.Value) (uint64, bool) {
	n, err := strconv.ParseUint(string(v), 10, 63)
	return n, err == nil && strconv.FormatUint(n, 10) == string(v)
}

// errCannotSay is returned by the writers for what a target format cannot
// express; convert names the transaction and what.
var errCannotSay = errors.New("the target format cannot say this")

// cannotSay names the transaction and operation a writer cannot express.
func cannotSay(format string, t *history.Txn, field, why string) error {
	return &history.Error{Pos: t.Pos, ID: t.ID, Field: field, Err: fmt.Errorf("%w: %s %s", errCannotSay, format, why)}
}

// peerKeys returns the integer each key is written as: itself when every
// key of h is a non-negative integer, else 1, 2, ... in order of first
// appearance. Keys are names: a bijective renaming changes no verdict, and
// it lets Cobra's signed key hashes and string keys be written.
func peerKeys(h *history.History) map[history.Key]uint64 {
	keys := make(map[history.Key]uint64)
	same := true
	for i := range h.Txns {
		for _, op := range h.Txns[i].Ops {
			if _, seen := keys[op.Key]; seen {
				continue
			}
			n, ok := peerInt(op.Key)
			same = same && ok
			keys[op.Key] = n
		}
	}
	if same {
		return keys
	}
	next := uint64(0)
	for k := range keys {
		delete(keys, k)
	}
	for i := range h.Txns {
		for _, op := range h.Txns[i].Ops {
			if _, seen := keys[op.Key]; !seen {
				next++
				keys[op.Key] = next
			}
		}
	}
	return keys
}

// peerOp checks that an operation fits the integer-only peer formats and
// returns its key and value; a read of null is value 0, the implicit
// initial value of dbcop and the text format.
func peerOp(format string, t *history.Txn, i int, keys map[history.Key]uint64) (key, val uint64, err error) {
	op := &t.Ops[i]
	field := fmt.Sprintf("ops[%d]", i)
	if op.Kind == history.Append || op.IsList {
		return 0, 0, cannotSay(format, t, field, "has no lists")
	}
	key = keys[op.Key]
	if op.Kind == history.Read && op.Value == history.Null {
		return key, 0, nil
	}
	val, ok := peerInt(op.Value)
	if !ok {
		return 0, 0, cannotSay(format, t, field, "values are non-negative integers, not "+string(op.Value))
	}
	if val == 0 {
		return 0, 0, cannotSay(format, t, field, "reserves 0 for the initial value")
	}
	return key, val, nil
}

package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// Viper's JSON logs (Khoury-srg/Viper: src/utils/utils.py load_logs_json
// reads them, src/parse/wr_range_parse.py construct_single_txn4wrrange_json
// and src/utils/range_utils.py get_value give the micro-operations' layout;
// hengxin/IsoVista's ViperHistorySerializer writes them): a directory of
// files named J<n>.log, one per client, each line one committed
// transaction:
//
//	{"value": [["r", key, value, is_dead], ["w", key, value, succ], ...]}
//
// A read of "nil" (or null) read an absent key; a read's fourth element
// (is_dead) is ignored, as Viper's ext_reads_fn ignores it for plain reads
// (IsoVista writes the transaction's success there); a write with succ
// false did not happen and is set aside. A transaction may carry "isInitial": true, the initial state
// of the database. The range, insert and delete operations of Viper's
// range workloads ("range", "i", "d") are
// outside the model, as is an initial-state transaction (the model's
// initial state is absent or unknown, not given values): they are errors.

// readViperDir reads a directory of Viper logs: the files whose names start
// with "J" (as Viper), one session each named by the file name without
// ".log", in natural name order.
func readViperDir(dir string, names []string, st *Stats) (*history.History, error) {
	h := &history.History{}
	for _, n := range names {
		path := filepath.Join(dir, n)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := readViperLog(h, b, path, strings.TrimSuffix(n, ".log"), st); err != nil {
			return nil, err
		}
	}
	if st.Records == 0 {
		// Every log is empty or blank. Said here, with the files named,
		// because a caller's "no transactions" would not say that the
		// logs themselves hold nothing (Plume publishes four such
		// directories: docs/SEMANTICS.md §9, "Plume's test cases").
		return nil, &history.Error{Pos: history.Pos{Source: dir}, Err: fmt.Errorf("every Viper log here is empty (%s): no transaction to read", strings.Join(names, ", "))}
	}
	return h, nil
}

// isViperDir tells a directory of Viper logs (names J*) from Cobra's
// (T*.log) by content: Viper's when the first J* file that holds anything
// starts with '{'. When every J* file is empty the content cannot tell, so
// the names decide: Viper's when no other file is a ".log" (Cobra reads
// every *.log, so a directory with a T*.log stays Cobra's).
func isViperDir(dir string, entries []os.DirEntry, names []string) bool {
	if len(names) == 0 {
		return false
	}
	for _, n := range names {
		if c := firstByte(filepath.Join(dir, n)); c != 0 {
			return c == '{'
		}
	}
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".log") && !strings.HasPrefix(e.Name(), "J") {
			return false
		}
	}
	return true
}

// readViper reads one Viper log given as a file: one session named by its
// base name.
func readViper(all []byte, source string, st *Stats) (*history.History, error) {
	h := &history.History{}
	if err := readViperLog(h, all, source, strings.TrimSuffix(filepath.Base(source), ".log"), st); err != nil {
		return nil, err
	}
	return h, nil
}

type viperTxn struct {
	Value     []json.RawMessage `json:"value"`
	IsInitial bool              `json:"isInitial"`
}

func readViperLog(h *history.History, b []byte, source, session string, st *Stats) error {
	line := 0
	for len(b) > 0 {
		line++
		var l []byte
		if nl := bytes.IndexByte(b, '\n'); nl >= 0 {
			l, b = b[:nl], b[nl+1:]
		} else {
			l, b = b, nil
		}
		if blank(l) {
			continue
		}
		st.Records++
		pos := history.Pos{Source: source, Line: line}
		fail := func(field string, err error) error { return &history.Error{Pos: pos, Field: field, Err: err} }
		var vt viperTxn
		d := json.NewDecoder(bytes.NewReader(l))
		d.UseNumber()
		if err := d.Decode(&vt); err != nil {
			return fail("", fmt.Errorf("want one JSON object {\"value\": [...]}: %v", err))
		}
		if d.More() {
			return fail("", errors.New("text after the JSON object"))
		}
		if vt.IsInitial {
			return fail("isInitial", errors.New("an initial-state transaction gives keys initial values, which the model cannot say (its initial state is absent or unknown)"))
		}
		t := history.Txn{ID: session + "-" + strconv.Itoa(line), Session: session, HasSession: true, Pos: pos}
		for i, raw := range vt.Value {
			field := fmt.Sprintf("value[%d]", i)
			var mop []any
			d := json.NewDecoder(bytes.NewReader(raw))
			d.UseNumber()
			if err := d.Decode(&mop); err != nil || len(mop) < 3 {
				return fail(field, fmt.Errorf("want [f, key, value, flag], got %s", clip(raw)))
			}
			f, _ := mop[0].(string)
			key, err := viperScalar(mop[1], false)
			if err != nil {
				return fail(field+"[1]", err)
			}
			switch f {
			case "r":
				v, err := viperScalar(mop[2], true)
				if err != nil {
					return fail(field+"[2]", err)
				}
				t.Ops = append(t.Ops, history.Op{Kind: history.Read, Key: key, Value: v})
			case "w":
				v, err := viperScalar(mop[2], false)
				if err != nil {
					return fail(field+"[2]", err)
				}
				if len(mop) > 3 && mop[3] == false {
					st.SetAside++
					continue
				}
				t.Ops = append(t.Ops, history.Op{Kind: history.Write, Key: key, Value: v})
			default:
				return fail(field+"[0]", fmt.Errorf("operation %s: only \"r\" and \"w\" are in the model (Viper's range, insert and delete are not)", clip(raw[:min(len(raw), 12)])))
			}
		}
		h.Txns = append(h.Txns, t)
		st.Txns++
	}
	return nil
}

// viperScalar maps a JSON scalar onto canonical text: integers exactly,
// strings quoted; "nil" and null are absent where allowed (reads).
func viperScalar(v any, nullOK bool) (history.Value, error) {
	switch x := v.(type) {
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return "", fmt.Errorf("want an int64, got %s", x)
		}
		return history.IntValue(n), nil
	case string:
		if x == "nil" && nullOK {
			return history.Null, nil
		}
		return history.StringValue(x), nil
	case nil:
		if nullOK {
			return history.Null, nil
		}
	}
	return "", fmt.Errorf("want an integer or a string, got %v", v)
}

// viperNames lists a directory's Viper logs: files whose names start with
// "J", in natural order.
func viperNames(entries []os.DirEntry) []string {
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), "J") {
			names = append(names, e.Name())
		}
	}
	sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	return names
}

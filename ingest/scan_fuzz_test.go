package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// FuzzScanNative: on any input ReadHistory reads as native JSON Lines,
// ScanNative gives the same transactions and numbers keys and values by
// its rules (scanAgainst: each id names its op's text, each value text
// one id, IntID for the canonical integers it covers). The scan is the
// compact paths' decoder (check at the serializable levels with client
// times or stamps), so a difference is a wrong verdict there.
func FuzzScanNative(f *testing.F) {
	f.Add([]byte(`{"session":"c7","id":"c7-42","start":1,"end":2,"status":"committed","ops":[["r","x",1023],["w","x",1024],["w","y",999999999],["w","z",1000000000],["r","l",[3,17,123456]]]}` + "\n"))
	f.Add([]byte(`{"status":"unknown","ops":[["w","\u00e9",1.0],["r",-0,null],["r",1,[true,"1",1]],["w","a",01]]}` + "\n" + `{"ops":[["w",2000,2000],["r",2000,"2000"]]}` + "\n"))
	addSamples(f, ".jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		h, format, err := ReadHistory(bytes.NewReader(data), "t")
		if err != nil || format != FormatNative {
			return
		}
		if err := scanAgainst(data, h); err != nil && !errors.Is(err, ErrNotScannable) {
			t.Fatal(err)
		}
	})
}

// scanRecord is an Event copied out of its callback.
type scanRecord struct {
	Txn                     history.Txn
	Facts                   history.Facts
	KeyIDs, ValIDs, ListIDs []int32
	Texts                   []history.Value
}

func scanRecords(data []byte, slow bool) ([]scanRecord, error) {
	var out []scanRecord
	err := scanNative(bytes.NewReader(data), "t", slow, func(e *Event) error {
		out = append(out, copyRecord(e))
		return nil
	})
	return out, err
}

// FuzzScanNativeFast: on any input, ScanNative with the fast path gives
// the events, ids and error of ScanNative with the general decoder alone
// (docs/SEMANTICS.md §10 "The native decoder's fast path"), whether or not
// ReadHistory accepts the whole input.
func FuzzScanNativeFast(f *testing.F) {
	f.Add([]byte(`{"session":"c7","id":"c7-42","start":1,"end":2,"commit_ts":3,"start_ts":1,"status":"committed","ops":[["r","x",1023],["w","x",1024],["w","y",999999999],["w","z",1000000000],["r","l",[3,17,123456]]]}` + "\n" + `{"status":"committed","ops":[["r","x",1.5],["w","x",1]]}` + "\n"))
	// As FuzzNativeFast's seed for the texts numbered after the line.
	f.Add([]byte(`{"status":"committed","ops":[["r","l",[5,5,7,"x"]],["w","x",5],["w","12345678","12345678"],["r","abcdefghijklmn",["abcdefghijklmno","abcdefghijklmnop"]],["w",7,123456789012]]}` + "\n" + `{"status":"committed","ops":[["w","q","new"],["w","q",1.5]]}` + "\n" + `{"status":"committed","ops":[["r","q",["new",1023,1024]]]}` + "\n"))
	addSamples(f, ".jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ferr := scanRecords(data, false)
		slow, serr := scanRecords(data, true)
		if fmt.Sprint(ferr) != fmt.Sprint(serr) {
			t.Fatalf("fast path error %v, general %v", ferr, serr)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast path events differ from the general decoder's:\n%+v\n%+v", fast, slow)
		}
	})
}

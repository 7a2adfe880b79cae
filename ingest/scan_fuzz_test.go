package ingest

import (
	"bytes"
	"errors"
	"testing"
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

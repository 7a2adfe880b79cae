package ingest

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
)

// TestKeysKeepTheirString: a stream of ever-new values (more than
// internLimit of them, as a recording's counters are) leaves each key
// one string, through the fast path and the general decoder alike
// (keys and values interned apart, pg32_intern.go), and every text
// decoded is still the line's.
func TestKeysKeepTheirString(t *testing.T) {
	for _, slow := range []bool{false, true} {
		d := &NativeDecoder{slow: slow}
		first := map[string]*byte{}
		for i := range internLimit {
			k := fmt.Sprintf("reg:%d", i%50)
			line := fmt.Sprintf(`{"session":"s","id":"t%d","start":%d,"end":%d,"status":"committed","ops":[["r",%q,%d],["w",%q,%d],["w","s%d","v%d"]]}`,
				i, 2*i, 2*i+1, k, 100000+i, k, 200000+i, i%7, i)
			txn, err := d.Decode([]byte(line), history.Pos{Line: i + 1})
			if err != nil {
				t.Fatalf("slow %v, line %d: %v", slow, i, err)
			}
			if len(txn.Ops) != 3 || string(txn.Ops[0].Key) != fmt.Sprintf("%q", k) || string(txn.Ops[1].Value) != fmt.Sprint(200000+i) || string(txn.Ops[2].Value) != fmt.Sprintf("%q", fmt.Sprintf("v%d", i)) {
				t.Fatalf("slow %v, line %d: decoded %+v", slow, i, txn.Ops)
			}
			for _, op := range txn.Ops[:2] {
				p := unsafe.StringData(string(op.Key))
				if q, ok := first[string(op.Key)]; ok && q != p {
					t.Fatalf("slow %v, line %d: key %s has a new string after %d distinct values", slow, i, op.Key, 3*i)
				}
				first[string(op.Key)] = p
			}
		}
	}
}

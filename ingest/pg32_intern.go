package ingest

import "github.com/streamcheck/streamcheck/history"

// Keys and values interned apart.
//
// Decode interns a short value in a table of its own (shortVals), not in
// the keys' (short). Both tables start again empty at internLimit texts.
// When values shared the keys' table, a stream whose values are all
// distinct (a recording's counters: pg1m writes about 1.6 new values a
// transaction over 20K keys) filled it every ~40K transactions, and each
// clearing gave every key a new string: equal text at a new address.
// That costs no verdict (a key is compared by its text everywhere), but
// everything downstream that is faster for one address per key lost it:
// the driver's kind cache (found by the address, driver/kinds.go) missed
// once per key after every clearing and fell back to hashing, and every
// map keyed by keys compared the engine's stored copy with the new one
// byte by byte (memequal's shortcut is the same address). With their own
// table, keys keep their strings until 64K distinct keys were seen.
//
// internValue returns the same text internKey would (the table a text is
// interned in never changes what Decode returns, only which copy).
func (d *NativeDecoder) internValue(b []byte) history.Value {
	if d.scratch || len(b) == 0 || len(b) > 16 {
		return d.internKey(b)
	}
	return d.shortVals.get(b)
}

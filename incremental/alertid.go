package incremental

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// Alert ids and canonical cores.
//
// An alert id names the anomaly itself, so that a sink can deduplicate
// on it (docs/SEMANTICS.md §5: "delivered at least once with stable ids"):
//
//	A1 Distinct anomalies never share an id. The id is a hash of the
//	   stream's name, the anomaly's class and, for every core member,
//	   its content: ID, session, start, end, status and a digest of its
//	   operations. Transaction ids alone do not name a transaction: a
//	   client whose counter restarts, or two runs' streams, reuse them,
//	   and a hash of ids alone gave two anomalies one id, the second
//	   dropped by every sink as a duplicate of the first.
//	A2 The same anomaly keeps its id. Nothing in the hash depends on
//	   where or when the engine found it: not the input position (line or
//	   offset: a file and a Kafka topic carrying the same events give the
//	   same ids), not the name an alert history gives a reused ID
//	   (nameApart's ID@start depends on what else the history holds,
//	   which a restart or a rewind-point replay changes), not arrival
//	   order. An alert updated after its members closed (AM1) keeps the
//	   id it was first raised under.
//	A3 The same facts give the same core: the shrink deletes members in a
//	   fixed order defined by their content (contentCompare), never by a
//	   position in the history it happens to be checking, by map
//	   iteration or by arrival.
//
// The stream's name (OnlineConfig.Stream, `run --stream`) is empty by
// default: the id is then the anomaly's content alone, and a replay of
// the same events through another source gives the same ids. Streams
// whose alerts share sinks, and whose transactions could coincide in
// every field, set distinct names.

// alertIDVersion is hashed first: a change of what the id covers must
// not produce ids that collide with the old scheme's.
const alertIDVersion = "streamcheck alert id v2"

// alertID is the id of the anomaly of class class with core members
// (their bodies as released) in stream.
func alertID(stream, class string, members []history.Txn) string {
	digests := make([][sha256.Size]byte, len(members))
	var buf []byte
	for i := range members {
		digests[i], buf = txnDigest(&members[i], buf[:0])
	}
	// Set semantics: the order the caller lists the core in is not part
	// of the anomaly.
	slices.SortFunc(digests, func(a, b [sha256.Size]byte) int { return bytes.Compare(a[:], b[:]) })
	buf = appendField(buf[:0], alertIDVersion)
	buf = appendField(buf, stream)
	buf = appendField(buf, class)
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(digests)))
	for _, d := range digests {
		buf = append(buf, d[:]...)
	}
	sum := sha256.Sum256(buf)
	return "sc-" + hex.EncodeToString(sum[:12])
}

// txnDigest hashes what identifies a transaction's content: every field
// of its event but its input position. Each field is length-prefixed,
// so no two distinct transactions encode alike. buf is scratch space,
// returned for reuse.
func txnDigest(t *history.Txn, buf []byte) ([sha256.Size]byte, []byte) {
	buf = appendField(buf, t.ID)
	buf = appendField(buf, t.Session)
	buf = binary.BigEndian.AppendUint64(buf, uint64(t.Start))
	buf = binary.BigEndian.AppendUint64(buf, uint64(t.End))
	buf = binary.BigEndian.AppendUint64(buf, uint64(t.Status))
	flags := uint64(0)
	if t.HasSession {
		flags |= 1
	}
	if t.HasTime {
		flags |= 2
	}
	buf = binary.BigEndian.AppendUint64(buf, flags)
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(t.Ops)))
	for _, op := range t.Ops {
		kind := uint64(op.Kind) << 1
		if op.IsList {
			kind |= 1
		}
		buf = binary.BigEndian.AppendUint64(buf, kind)
		buf = appendField(buf, string(op.Key))
		buf = appendField(buf, string(op.Value))
		buf = binary.BigEndian.AppendUint64(buf, uint64(len(op.List)))
		for _, v := range op.List {
			buf = appendField(buf, string(v))
		}
	}
	return sha256.Sum256(buf), buf
}

func appendField(buf []byte, s string) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(s)))
	return append(buf, s...)
}

// contentCompare orders transactions by content (A3): start, end, ID,
// session, then the digest of the rest, so that two transactions compare
// equal only if their events are the same.
func contentCompare(a, b *history.Txn) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.End, b.End); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Session, b.Session); c != 0 {
		return c
	}
	da, buf := txnDigest(a, nil)
	db, _ := txnDigest(b, buf[:0])
	return bytes.Compare(da[:], db[:])
}

package online

import "github.com/streamcheck/streamcheck/history"

// AppendBody appends t in the body file's record encoding (spillcodec.go)
// and DecodeBody reads it back: exported for another engine that keeps
// released transactions in a BodyFile (stamponline's call log), so that
// there is one codec for bodies, not two.
func AppendBody(b []byte, t *history.Txn) []byte { return appendTxn(b, t) }

// DecodeBody reads a record AppendBody wrote.
func DecodeBody(b []byte) (history.Txn, error) { return decodeTxn(b) }

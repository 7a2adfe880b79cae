package online

import "github.com/streamcheck/streamcheck/history"

// AppendTxnRecord and DecodeTxnRecord are the spill codec (spillcodec.go)
// for package sionline, which archives the bodies it evicts in it.
func AppendTxnRecord(b []byte, t *history.Txn) []byte { return appendTxn(b, t) }

// DecodeTxnRecord decodes one record AppendTxnRecord wrote.
func DecodeTxnRecord(b []byte) (history.Txn, error) { return decodeTxn(b) }

package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// ErrNotScannable: ScanNative does not read this input (not native JSON
// Lines, or compressed); the caller reads it with ReadHistory.
var ErrNotScannable = errors.New("ingest: not a plain native history")

// ScanNative decodes a native JSON Lines history one line at a time,
// without holding it: fn gets each transaction, in input order, and its
// database facts (Event). The transaction's ops, list reads and ID may live in
// the decoder's buffers or the input's and are valid only during the call
// (fn copies what it keeps); its Session is the caller's to keep. The decoding is
// ReadHistory's, line for line (NativeDecoder), so a transaction reads
// alike on both paths; what ScanNative does not do is History.Validate,
// which needs the whole history: the caller that keeps a compact form
// checks what it relies on, and reads the input again with ReadHistory
// for the error text when a line fails (the error returned here is the
// decoder's for the first bad line, as ReadHistory reports it).
//
// It returns ErrNotScannable, before fn is called, when the input is
// gzip-compressed or its format is not native. fn's error stops the scan
// and is returned.
//
// Why: a history with database stamps is checked from a compact form
// (stampcheck.Compact) at a few bytes per op; as []history.Txn a 1M
// history took 1.6 GB, whose first touch was most of check's CPU time
// (BENCHMARKS.md "stamps4").
func ScanNative(r io.Reader, source string, fn func(e *Event) error) error {
	return scanNative(r, source, false, fn)
}

// scanNative is ScanNative; slow reads every line with the general
// decoder alone (the tests' reference for the fast path).
func scanNative(r io.Reader, source string, slow bool, fn func(e *Event) error) error {
	br := bufio.NewReaderSize(r, peekSize)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return ErrNotScannable
	}
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3) // offsets count from after it, as ReadHistory's
	}
	head, err := br.Peek(peekSize)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return err
	}
	if f, derr := detect(head); derr != nil || f != FormatNative {
		return ErrNotScannable
	}
	d := NativeDecoder{scratch: true, slow: slow}
	return d.scanLines(br, source, 1, 0, nil, fn)
}

// scanLines decodes br's lines with d, numbering them from line and
// their offsets from off (ScanNative's loop: 1 and 0; ScanNativeSplit
// runs one per part, from the part's first line). stop, when not nil, is
// called before each line: true, the scan returns errSplitStopped (a
// part before this one failed).
func (d *NativeDecoder) scanLines(br *bufio.Reader, source string, line int, off int64, stop func() bool, fn func(e *Event) error) error {
	// One transaction and one event for the whole scan: fn's arguments
	// are valid only during the call, and a fresh pair per line was the
	// scan's main allocation.
	var t history.Txn
	ev := Event{Txn: &t}
	var long []byte // a line longer than the reader's buffer
	for ; ; line++ {
		if stop != nil && stop() {
			return errSplitStopped
		}
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], b...)
			for err == bufio.ErrBufferFull {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(b) == 0 && err == io.EOF {
			return nil
		}
		if !blank(b) {
			pos := history.Pos{Source: source, Line: line, Offset: off}
			var derr *decodeError
			t, derr = d.decode(b, pos)
			if derr != nil {
				return nativeError(pos, strings.Clone(t.ID), derr)
			}
			ev.Facts, ev.KeyIDs, ev.ValIDs, ev.ListIDs, ev.Texts = d.facts, d.keyIDs, d.valIDs, d.listIDs, d.ids.text
			if ferr := fn(&ev); ferr != nil {
				return ferr
			}
		}
		off += int64(len(b))
		if err == io.EOF {
			return nil
		}
	}
}

// Event is one transaction as ScanNative gives it: the transaction, its
// facts, and every key and value numbered (ids dense from 0, one per
// distinct text in the whole scan; NullID is null's; a value that is a
// canonical integer from 1024 to 999,999,999 is numbered by itself,
// IntID, a negative id): KeyIDs[n] is op n's key, ValIDs[n] its value, or
// for a list read the offset in ListIDs of its elements' ids (len(op.List)
// of them). Equal ids are exactly equal texts, and each value text has
// one id (a key's text may have another: keys and values are never
// compared). Texts[id] is the text of an id of 0 or more. Numbering happens in the decoder's one hash of each key and value
// occurrence, so a consumer indexes arrays by id and hashes nothing
// again. Every slice is valid only during the callback.
type Event struct {
	Txn                     *history.Txn
	Facts                   history.Facts
	KeyIDs, ValIDs, ListIDs []int32
	Texts                   []history.Value
}

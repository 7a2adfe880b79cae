package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/streamcheck/streamcheck/history"
)

// Format is an input format, detected from content.
type Format uint8

const (
	// FormatNative: JSON Lines, one finished transaction per line.
	FormatNative Format = iota
	// FormatElleEDN: a Jepsen/Elle history in EDN.
	FormatElleEDN
	// FormatElleJSON: a Jepsen/Elle history in JSON.
	FormatElleJSON
	// FormatCobra: Cobra's binary client logs, a directory of T<n>.log
	// or one log (cobra.go).
	FormatCobra
	// FormatDBCop: dbcop's history.bincode (dbcop.go).
	FormatDBCop
	// FormatText: the r(key,value,session,txn) lines of PolySI, Plume
	// and IsoVista (plaintext.go).
	FormatText
	// FormatAWDIT: AWDIT's test format (awdit.go).
	FormatAWDIT
	// FormatViper: Viper's JSON logs, a directory of J<n>.log or one log
	// (viper.go).
	FormatViper
)

func (f Format) String() string {
	switch f {
	case FormatNative:
		return "native"
	case FormatElleEDN:
		return "elle-edn"
	case FormatElleJSON:
		return "elle-json"
	case FormatCobra:
		return "cobra"
	case FormatDBCop:
		return "dbcop"
	case FormatText:
		return "text"
	case FormatAWDIT:
		return "awdit"
	case FormatViper:
		return "viper"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// peekSize is how much input format detection may look at, and the read
// buffer size.
const peekSize = 64 << 10

// ReadFile reads a whole history from a file in any supported format,
// gzip-compressed or not. "-" reads standard input. A directory is read as
// Cobra client logs, or as dbcop's when it holds history.bincode.
func ReadFile(path string) (*history.History, Format, error) {
	h, f, _, err := ReadFileStats(path)
	return h, f, err
}

// ReadFileStats is ReadFile that also returns what was read and set aside.
func ReadFileStats(path string) (*history.History, Format, Stats, error) {
	if path == "-" {
		return ReadHistoryStats(os.Stdin, "-")
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return readDir(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, Stats{}, err
	}
	defer f.Close()
	return ReadHistoryStats(f, path)
}

// ReadHistory reads a whole history in any supported format (detected
// from content; gzip is detected by its magic bytes). source names the
// input in positions and errors. It returns the whole history, validated
// (history.Validate), or an error and no history; decoding errors are
// *history.Error naming the line and field.
func ReadHistory(r io.Reader, source string) (*history.History, Format, error) {
	h, f, _, err := ReadHistoryStats(r, source)
	return h, f, err
}

// ReadHistoryStats is ReadHistory that also returns what was read and set
// aside (Elle operations of the nemesis or with another :f, invocations
// never completed).
func ReadHistoryStats(r io.Reader, source string) (*history.History, Format, Stats, error) {
	var st Stats
	br := bufio.NewReaderSize(r, peekSize)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, 0, st, &history.Error{Pos: history.Pos{Source: source, Line: 1}, Err: fmt.Errorf("gzip: %w", err)}
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, peekSize)
	}
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3)
	}
	head, err := br.Peek(peekSize)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, 0, st, &history.Error{Pos: history.Pos{Source: source, Line: 1}, Err: err}
	}
	format, derr := detect(head)
	if derr != nil && len(head) < peekSize {
		return nil, 0, st, &history.Error{Pos: history.Pos{Source: source, Line: 1}, Err: derr}
	}
	var h *history.History
	all, err := readAll(br, sizeHint(r))
	if err == nil && derr != nil {
		// The first object is longer than the peek (a large field before
		// "ops"): decide on the whole of it, or a native history that run
		// reads line by line would be an input error here.
		if format, derr = detect(all); derr != nil {
			return nil, 0, st, &history.Error{Pos: history.Pos{Source: source, Line: 1}, Err: derr}
		}
	}
	if err != nil {
		err = &history.Error{Pos: history.Pos{Source: source, Line: lineOf(all, len(all)), Offset: int64(len(all))}, Err: err}
	} else {
		switch format {
		case FormatNative:
			h, err = readNativeAll(all, source, &st)
		case FormatElleEDN:
			h, err = readElleEDN(all, source, &st)
		case FormatCobra:
			h, err = readCobraLog(all, source, &st)
		case FormatDBCop:
			h, err = readDBCop(all, source, &st)
		case FormatText:
			h, err = readText(all, source, &st)
		case FormatAWDIT:
			h, err = readAWDIT(all, source, &st)
		case FormatViper:
			h, err = readViper(all, source, &st)
		default:
			h, err = readElleJSON(all, source, &st)
		}
	}
	if err == nil {
		err = h.Validate()
	}
	if err != nil {
		return nil, format, st, err
	}
	return h, format, st, nil
}

// DetectFormat tells the format of an input from its first bytes, as
// ReadHistory does (after gzip and a byte order mark are taken off); run
// uses it to read an Elle history on standard input as check would.
func DetectFormat(head []byte) (Format, error) { return detect(head) }

// detect tells the format from the first bytes (doc.go, "Format
// detection").
func detect(head []byte) (Format, error) {
	if f, ok := detectPeer(head); ok {
		return f, nil
	}
	s := &scanner{b: head}
	switch c := s.peek(); c {
	case 0:
		return FormatNative, nil // empty: no transactions
	case '{':
		s.i++
		switch s.peek() {
		case ':':
			return FormatElleEDN, nil
		case '"':
		default:
			return FormatNative, nil // let the native decoder say what is wrong
		}
		s.i--
		// Read the first object's keys; "ops" means native, "type" Elle.
		// The object may be cut off by the peek limit; keys seen so far
		// decide.
		hasType, hasValue := false, false
		if s.open('{', '}') {
			for s.err == nil {
				switch s.str() {
				case "ops":
					return FormatNative, nil
				case "type", ":type":
					hasType = true
				case "value":
					hasValue = true
				}
				s.expect(':')
				s.skip(0)
				if !s.more('}') {
					break
				}
			}
		}
		if hasType {
			return FormatElleJSON, nil
		}
		if hasValue {
			return FormatViper, nil // a Viper log: {"value": [...]}
		}
		return 0, errors.New(`cannot tell the format: the first object has neither "ops" (native) nor "type" (Jepsen/Elle) nor "value" (Viper)`)
	case '[':
		s.i++
		switch s.peek() {
		case ']':
			return FormatElleJSON, nil
		case '{':
			s.i++
			switch s.peek() {
			case '"', '}':
				return FormatElleJSON, nil
			}
		}
		return FormatElleEDN, nil
	case ';', '#', '(':
		return FormatElleEDN, nil
	}
	return 0, fmt.Errorf("cannot tell the format: input starts with %s, want '{' or '[' (or a peer's format: doc.go, \"Format detection\")", describeByte(head[s.i]))
}

// blank reports whether a line holds only JSON whitespace.
func blank(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return false
		}
	}
	return true
}

// detectPeer recognises the peers' formats (doc.go, "Format detection"):
// the binary ones from their first bytes, the text ones from the first
// non-space bytes, which none of the JSON and EDN formats can start with.
func detectPeer(head []byte) (Format, bool) {
	if looksDBCop(head) {
		return FormatDBCop, true
	}
	if len(head) >= cobraStartLen && head[0] == 'S' {
		return FormatCobra, true
	}
	i := 0
	for i < len(head) && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n') {
		i++
	}
	if i+1 >= len(head) {
		return 0, false
	}
	switch c, next := head[i], head[i+1]; {
	case (c == 'r' || c == 'w') && next == '(':
		return FormatText, true
	case (c == 'r' || c == 'w') && (next == ' ' || next == '\t'):
		return FormatAWDIT, true
	case c == '=' || (c == '-' && next == '-'):
		return FormatAWDIT, true
	}
	return 0, false
}

// readDir reads a directory: dbcop's when it holds history.bincode (as
// dbcop, PolySI and AWDIT lay them out), Viper's when it holds J* files
// that look like Viper's (isViperDir), else Cobra's client logs.
func readDir(dir string) (*history.History, Format, Stats, error) {
	var st Stats
	bin := filepath.Join(dir, "history.bincode")
	if _, err := os.Stat(bin); err == nil {
		h, f, st, err := ReadFileStats(bin)
		return h, f, st, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, st, err
	}
	format := FormatCobra
	var h *history.History
	if names := viperNames(entries); isViperDir(dir, entries, names) {
		format = FormatViper
		h, err = readViperDir(dir, names, &st)
	} else {
		h, err = readCobraDir(dir, &st)
	}
	if err == nil {
		err = h.Validate()
	}
	if err != nil {
		return nil, format, st, err
	}
	return h, format, st, nil
}

// firstByte returns a file's first non-space byte, or 0.
func firstByte(path string) byte {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	b := make([]byte, 512)
	n, _ := f.Read(b)
	for _, c := range b[:n] {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c
		}
	}
	return 0
}

package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"unsafe"
)

// errSplitStopped ends a part's scan when another part has failed: the
// split scan as a whole returns that part's error, never this one.
var errSplitStopped = errors.New("ingest: split scan stopped")

// Split is what ScanNativeSplit tells once every part is read: how each
// part's ids read in the numbering of one ScanNative over the whole input.
type Split struct {
	remap [][]int32 // per part, the part's id -> the whole scan's; nil for part 0
}

// Parts is the number of parts the input was read in (1 when it was too
// short to cut).
func (s *Split) Parts() int { return len(s.remap) }

// Remap is part's table from its own ids to the whole scan's: an id n of
// 0 or more in one of part's events (KeyIDs, ValIDs but a list read's
// offset, ListIDs) is Remap(part)[n] in the numbering ScanNative gives
// the whole input; a negative id (IntID) numbers its integer by itself
// and is the same in both. Part 0's table is nil: its ids are the whole
// scan's already.
func (s *Split) Remap(part int) []int32 { return s.remap[part] }

// ScanNativeSplit is ScanNative on the first size bytes of r, read in up
// to parts parts at once, each on its own goroutine with its own decoder:
// the input is cut after the first newline at or after each k/parts of
// its length, so that each part is a run of ScanNative's lines, in order.
// fn(part, e) gets each part's transactions in input order, on that
// part's goroutine (calls for different parts run at the same time). A
// part numbers its keys and values on its own, in order of first sight
// within the part (Event), and the returned Split maps them to what one
// ScanNative over the whole input gives (Split.Remap). Everything else
// is one scan's: each line is decoded as ScanNative decodes it, with its
// line and offset in the whole input (a part after the first counts the
// newlines before it first), so the default ids and positions are the
// same.
//
// It returns ErrNotScannable, before fn is called, where ScanNative
// would. When a line fails to decode, or fn returns an error, the parts
// after its part stop at their next line and the parts before it go on;
// the error returned is the first part's (in input order) that failed.
// A decoding error is therefore ScanNative's, line and field: the parts
// before it read every line without one. fn's error is fn's; a caller
// whose fn carries state from line to line (a compact form refusing a
// key used both ways across parts) decides across parts itself.
//
// Why: decoding is most of check's CPU on a stamped history, and it is
// the same work line by line; two parts read on two cores halve its wall
// time (docs/SEMANTICS.md §10 "The split scan"). The numbering is the
// only state one line leaves to the next besides its position, and Remap
// restores it.
func ScanNativeSplit(r io.ReaderAt, size int64, source string, parts int, fn func(part int, e *Event) error) (*Split, error) {
	return scanSplit(r, size, source, parts, nil, false, fn)
}

// scanSplit is ScanNativeSplit; cuts, when not nil, are the positions to
// cut at instead of k/parts of the input (each moved to after the first
// newline at or after it, as those are); slow reads every line with the
// general decoder alone.
func scanSplit(r io.ReaderAt, size int64, source string, parts int, cuts []int64, slow bool, fn func(part int, e *Event) error) (*Split, error) {
	// The head as ScanNative reads it: gzip's magic, a byte order mark,
	// then the format detected on the first peekSize bytes after it.
	head := make([]byte, min(size, peekSize+3))
	if n, err := r.ReadAt(head, 0); n < len(head) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return nil, ErrNotScannable
	}
	start := int64(0)
	if bytes.HasPrefix(head, []byte("\xef\xbb\xbf")) {
		start = 3 // offsets count from after it, as ReadHistory's
	}
	if f, derr := detect(head[start:min(int64(len(head)), start+peekSize)]); derr != nil || f != FormatNative {
		return nil, ErrNotScannable
	}
	if cuts == nil {
		for k := 1; k < parts; k++ {
			cuts = append(cuts, start+(size-start)*int64(k)/int64(parts))
		}
	}
	bounds, err := lineCuts(r, start, size, cuts)
	if err != nil {
		return nil, err
	}
	n := len(bounds) - 1
	decs := make([]NativeDecoder, n)
	errs := make([]error, n)
	s := &Split{remap: make([][]int32, n)}
	// failed is the first part (in input order) that failed so far, n
	// while none has: the parts after it stop, the ones before it go on,
	// since one of them may fail earlier in the input.
	var failed atomic.Int32
	failed.Store(int32(n))
	var wg sync.WaitGroup
	for k := range n {
		decs[k] = NativeDecoder{scratch: true, slow: slow}
		read := func() {
			errs[k] = readPart(r, bounds, k, source, &decs[k], func() bool { return failed.Load() < int32(k) }, func(e *Event) error { return fn(k, e) })
			if errs[k] != nil {
				for f := failed.Load(); int32(k) < f && !failed.CompareAndSwap(f, int32(k)); f = failed.Load() {
				}
			}
		}
		if k == n-1 {
			read() // the last part on the caller's goroutine
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			read()
		}()
	}
	wg.Wait()
	// The first part's error is one scan's: every part before it read all
	// its lines without one, and a part's lines read as in one scan.
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	// Each later part's texts, in its own order of first sight, looked up
	// in (and, when new, added to) part 0's table: the order one decoder
	// would have met them in, since a part's lines come after every line
	// of the parts before it (docs/SEMANTICS.md §10 "The split scan").
	g := &decs[0].ids
	for k := 1; k < n; k++ {
		text := decs[k].ids.text
		m := make([]int32, len(text))
		for id := 1; id < len(text); id++ {
			v := text[id]
			m[id] = g.of(unsafe.Slice(unsafe.StringData(string(v)), len(v)))
		}
		s.remap[k] = m // m[0] is NullID's, 0 in every part
	}
	return s, nil
}

// readPart scans part k of r, from bounds[k] to bounds[k+1], with d:
// its lines numbered and placed as one scan places them, by the newlines
// before bounds[k] (a transaction without an id is named by its line, and
// an error names it).
func readPart(r io.ReaderAt, bounds []int64, k int, source string, d *NativeDecoder, stop func() bool, fn func(e *Event) error) error {
	line := 1
	if k > 0 {
		buf := make([]byte, 256<<10)
		for at := bounds[0]; at < bounds[k]; {
			if stop() {
				return errSplitStopped
			}
			n, err := r.ReadAt(buf[:min(int64(len(buf)), bounds[k]-at)], at)
			line += bytes.Count(buf[:n], []byte{'\n'})
			if at += int64(n); at < bounds[k] && err != nil {
				return err
			}
		}
	}
	sec := io.NewSectionReader(r, bounds[k], bounds[k+1]-bounds[k])
	return d.scanLines(bufio.NewReaderSize(sec, peekSize), source, line, bounds[k]-bounds[0], stop, fn)
}

// lineCuts returns the parts' bounds: start, each cut moved to just after
// the first newline at or after it, size; a cut that lands on or before
// the last bound, or at the end, is dropped.
func lineCuts(r io.ReaderAt, start, size int64, cuts []int64) ([]int64, error) {
	bounds := []int64{start}
	buf := make([]byte, 64<<10)
	for _, c := range cuts {
		c = max(c, bounds[len(bounds)-1])
		for c < size {
			n, err := r.ReadAt(buf[:min(int64(len(buf)), size-c)], c)
			if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
				c += int64(i) + 1
				break
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			if n == 0 {
				return nil, io.ErrUnexpectedEOF
			}
			c += int64(n)
		}
		if c > bounds[len(bounds)-1] && c < size {
			bounds = append(bounds, c)
		}
	}
	return append(bounds, size), nil
}

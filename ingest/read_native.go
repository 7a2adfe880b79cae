package ingest

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/streamcheck/streamcheck/history"
)

// parallelMin is the input size below which a history is decoded on one
// goroutine: splitting costs more than it saves on small inputs.
const parallelMin = 1 << 20

// readNativeAll decodes a whole JSON Lines history held in memory. Lines
// are independent, so the input is cut at newlines into one chunk per
// processor and the chunks decode in parallel; reading is a third of
// `check`'s time on large histories otherwise. Positions and the error
// reported are those of a sequential read: the first bad line wins.
func readNativeAll(all []byte, source string, st *Stats) (*history.History, error) {
	parts := min(runtime.GOMAXPROCS(0), 8)
	if len(all) < parallelMin {
		parts = 1
	}
	bounds := []int{0}
	for i := 1; i < parts; i++ {
		at := len(all) * i / parts
		if at <= bounds[len(bounds)-1] {
			continue
		}
		nl := bytes.IndexByte(all[at:], '\n')
		if nl < 0 || at+nl+1 >= len(all) {
			break
		}
		bounds = append(bounds, at+nl+1)
	}
	bounds = append(bounds, len(all))
	chunks := make([]nativeChunk, len(bounds)-1)
	line := 1
	for i := range chunks {
		c := &chunks[i]
		c.data, c.firstLine, c.offset = all[bounds[i]:bounds[i+1]], line, int64(bounds[i])
		c.lines = bytes.Count(c.data, []byte{'\n'})
		line += c.lines
	}
	var wg sync.WaitGroup
	for i := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chunks[i].decode(source)
		}()
	}
	wg.Wait()
	n := 0
	for i := range chunks {
		if chunks[i].err != nil {
			return nil, chunks[i].err
		}
		n += len(chunks[i].txns)
	}
	h := &history.History{Txns: make([]history.Txn, 0, n)}
	for i := range chunks {
		st.Records += chunks[i].records
		if chunks[i].facts != nil {
			// The side table exists once any line carried a fact; the
			// chunks before this one carried none.
			if h.Facts == nil {
				h.Facts = make([]history.Facts, len(h.Txns), n)
			}
			h.Facts = append(h.Facts, chunks[i].facts...)
		} else if h.Facts != nil {
			h.Facts = append(h.Facts, make([]history.Facts, len(chunks[i].txns))...)
		}
		h.Txns = append(h.Txns, chunks[i].txns...)
		chunks[i].txns, chunks[i].facts = nil, nil
	}
	st.Txns = len(h.Txns)
	return h, nil
}

type nativeChunk struct {
	data      []byte
	firstLine int
	lines     int
	offset    int64

	txns []history.Txn
	// facts is parallel to txns once a line of the chunk carried a
	// database fact, nil before (history.History.Facts).
	facts   []history.Facts
	records int
	err     error
}

func (c *nativeChunk) decode(source string) {
	d := NativeDecoder{batch: true}
	c.txns = make([]history.Txn, 0, c.lines+1)
	rest, off := c.data, c.offset
	for line := c.firstLine; len(rest) > 0; line++ {
		b := rest
		if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
			b = rest[:nl+1]
		}
		rest = rest[len(b):]
		if !blank(b) {
			c.records++
			t, err := d.Decode(b, history.Pos{Source: source, Line: line, Offset: off})
			if err != nil {
				c.err = err
				return
			}
			if f := d.Facts(); f.Has != 0 && c.facts == nil {
				c.facts = make([]history.Facts, len(c.txns), cap(c.txns))
			}
			if c.facts != nil {
				c.facts = append(c.facts, d.Facts())
			}
			c.txns = append(c.txns, t)
		}
		off += int64(len(b))
	}
}

// sizeHint is the input's size when it is a regular file, so that it is
// read into one allocation instead of a doubling series of copies.
func sizeHint(r io.Reader) int {
	f, ok := r.(*os.File)
	if !ok {
		return 0
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return int(fi.Size())
}

// readAll reads what remains of br. hint is the expected size (0: unknown);
// the buffer's own read-ahead is part of it.
func readAll(br *bufio.Reader, hint int) ([]byte, error) {
	var buf bytes.Buffer
	if hint > 0 {
		buf.Grow(hint + bytes.MinRead)
	}
	_, err := buf.ReadFrom(br)
	return buf.Bytes(), err
}

package online

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"

	"github.com/cespare/xxhash/v2"

	"github.com/streamcheck/streamcheck/history"
)

// The write index (docs/SEMANTICS.md §5 "The write index"): which
// released transactions may write a (key, value) or append to a key,
// kept in the body file so that confirming a window violation reads the
// possible writers of what the window reads, not every body ever
// released.
//
// Confirmation needs H|S (localHistory): S's bodies and every possible
// writer of what S reads, wherever it is in the stream. A pass over every
// released body found them, which made each alert step cost the stream
// (an anomaly storm: 2,970 transactions per CPU second at 223K, falling
// with length). Memory cannot hold an index of every write on a run of
// weeks, so the index is in the body file, as sorted runs:
//
//   - Each release adds one entry per write to pending: the 32-bit hash of
//     ('w', key, value), or of ('a', key) for an append, and the release
//     position. When a log chunk (widxEvery releases) is complete, its
//     entries are sorted and written as a run: pages of widxPage entries,
//     each page followed by its CRC-32C, then a fence block (each page's
//     first hash, and a CRC-32C). Only the fences stay in memory: 4 bytes
//     per widxPage writes.
//   - Runs are merged as a binary counter merges (two runs of the same
//     number of chunks become one), so there are at most log2(chunks)+1
//     of them and each entry is rewritten O(log chunks) times.
//   - A lookup hashes every (key, value) and key S reads, and reads, in
//     each run, only the pages whose fences can hold those hashes.
//
// W1 The index is a superset: every released transaction that writes
// (key, value) or appends to key has an entry under that hash, in a run
// or in pending. Every caller filters the positions it returns by the
// bodies (writes), so a hash collision, an entry of a gone body or of a
// transaction released again after a restart costs a body read, never a
// wrong H|S. A run that cannot be written turns the index off (on false)
// and localHistory falls back to the pass over every body.
//
// W2 Retention: a run that lies below the body file's cut is copied
// forward (copyForward, retain.go) with its entries of gone bodies
// dropped, as bodies still needed are.
//
// W3 Restore: a durable snapshot holds the runs (offsets, sizes) and how
// many releases they cover; the fences are read back from the file and
// pending is rebuilt from the bodies of the last, incomplete chunk. Any
// other restore releases every body again (appendLog), which indexes it.
// A durable snapshot without the index (older) leaves it off.
type writeIndex struct {
	on      bool
	runs    []widxRun
	covered int         // releases [0, covered) are in runs
	pending []widxEntry // releases [covered, log.len())
	buf     []byte      // hashing and page scratch
	page    []byte      // a lookup's read buffer
}

// widxEntry is one write: its hash and release position.
type widxEntry struct {
	h   uint32
	pos uint32
}

// widxRun is one sorted run in the body file.
type widxRun struct {
	Off    int64 // first page
	N      int   // entries
	Chunks int   // log chunks merged into it (the merge policy)
	fences []uint32
}

// widxEvery is how many releases one run holds when written: a log
// chunk (a variable for the tests, which make it small so that short
// histories write and merge runs).
var widxEvery = logChunkSize

// widxPage entries per page: a lookup reads 8*widxPage+4 bytes per page
// it needs; memory holds 4 bytes per page.
const widxPage = 64

const widxPageBytes = 8*widxPage + crcSize

func (r *widxRun) pages() int { return (r.N + widxPage - 1) / widxPage }

// pageSpan is page k's offset and entry count.
func (r *widxRun) pageSpan(k int) (int64, int) {
	return r.Off + int64(k)*widxPageBytes, min(widxPage, r.N-k*widxPage)
}

// fenceOff is where the run's fence block begins.
func (r *widxRun) fenceOff() int64 {
	if r.N == 0 {
		return r.Off
	}
	off, n := r.pageSpan(r.pages() - 1)
	return off + int64(8*n+crcSize)
}

// end is the offset after the run's last byte.
func (r *widxRun) end() int64 { return r.fenceOff() + int64(4*r.pages()+crcSize) }

// widxHash hashes a write of (key, value) (tag 'w') or an append to key
// (tag 'a', value empty).
func (x *writeIndex) hash(tag byte, k history.Key, v history.Value) uint32 {
	x.buf = append(x.buf[:0], tag)
	x.buf = append(x.buf, k...)
	x.buf = append(x.buf, 0)
	x.buf = append(x.buf, v...)
	return uint32(xxhash.Sum64(x.buf))
}

// add indexes the writes of release i.
func (x *writeIndex) add(i int, ops []history.Op) {
	for _, op := range ops {
		switch op.Kind {
		case history.Read:
		case history.Append:
			x.pending = append(x.pending, widxEntry{x.hash('a', op.Key, ""), uint32(i)})
		default:
			x.pending = append(x.pending, widxEntry{x.hash('w', op.Key, op.Value), uint32(i)})
		}
	}
}

func cmpEntry(a, b widxEntry) int {
	if a.h != b.h {
		if a.h < b.h {
			return -1
		}
		return 1
	}
	return int(a.pos) - int(b.pos)
}

// indexWrites adds release i's writes to the index and, when i completes
// a log chunk, writes the chunk's run and merges (W1).
func (o *Online) indexWrites(i int, ops []history.Op) {
	x := &o.widx
	if !x.on {
		return
	}
	x.add(i, ops)
	if (i+1)%widxEvery != 0 {
		return
	}
	if err := o.flushIndex(i + 1); err != nil {
		// Off: localHistory reads every body, as before the index.
		x.on, x.runs, x.pending = false, nil, nil
		if o.spillErr == nil {
			o.spillErr = err
		}
	}
}

// flushIndex writes pending (releases [covered, upTo)) as a run and
// merges the newest runs while two cover as many chunks.
func (o *Online) flushIndex(upTo int) error {
	x, sp := &o.widx, &o.spill
	if o.spillErr != nil {
		return o.spillErr
	}
	if !sp.opened {
		if err := sp.open(); err != nil {
			return err
		}
	}
	slices.SortFunc(x.pending, cmpEntry)
	w := widxWriter{sp: sp}
	for _, e := range x.pending {
		if err := w.add(e); err != nil {
			return err
		}
	}
	r, err := w.finish()
	if err != nil {
		return err
	}
	r.Chunks = 1
	x.runs = append(x.runs, r)
	x.covered, x.pending = upTo, x.pending[:0]
	for n := len(x.runs); n >= 2 && x.runs[n-2].Chunks == x.runs[n-1].Chunks; n = len(x.runs) {
		m, err := o.rewriteRuns(x.runs[n-2:], 0)
		if err != nil {
			return err
		}
		m.Chunks = x.runs[n-2].Chunks + x.runs[n-1].Chunks
		x.runs = append(x.runs[:n-2], m)
	}
	return nil
}

// rewriteRuns merges runs into one written at the file's end, leaving
// out the entries of releases below from (gone bodies, W2).
func (o *Online) rewriteRuns(runs []widxRun, from int) (widxRun, error) {
	sp := &o.spill
	if err := sp.w.Flush(); err != nil {
		return widxRun{}, fmt.Errorf("engine: write index: %w", err)
	}
	its := make([]*widxIter, len(runs))
	for k := range runs {
		its[k] = &widxIter{sp: sp, r: &runs[k]}
		if err := its[k].next(); err != nil {
			return widxRun{}, err
		}
	}
	w := widxWriter{sp: sp}
	for {
		best := -1
		for k, it := range its {
			if it.ok && (best < 0 || cmpEntry(it.e, its[best].e) < 0) {
				best = k
			}
		}
		if best < 0 {
			break
		}
		if e := its[best].e; int(e.pos) >= from {
			if err := w.add(e); err != nil {
				return widxRun{}, err
			}
		}
		if err := its[best].next(); err != nil {
			return widxRun{}, err
		}
	}
	return w.finish()
}

// widxWriter writes one run through the spill's writer.
type widxWriter struct {
	sp     *spill
	off    int64
	n      int
	page   [widxPageBytes]byte
	inPage int
	fences []uint32
}

func (w *widxWriter) add(e widxEntry) error {
	if w.n == 0 {
		w.off = w.sp.end
	}
	if w.inPage == 0 {
		w.fences = append(w.fences, e.h)
	}
	binary.LittleEndian.PutUint32(w.page[8*w.inPage:], e.h)
	binary.LittleEndian.PutUint32(w.page[8*w.inPage+4:], e.pos)
	w.inPage++
	w.n++
	if w.inPage == widxPage {
		return w.flushPage()
	}
	return nil
}

func (w *widxWriter) flushPage() error {
	n := 8 * w.inPage
	binary.LittleEndian.PutUint32(w.page[n:], crc32.Checksum(w.page[:n], crcTable))
	w.inPage = 0
	return w.raw(w.page[:n+crcSize])
}

func (w *widxWriter) raw(b []byte) error {
	if _, err := w.sp.w.Write(b); err != nil {
		return fmt.Errorf("engine: write index: %w", err)
	}
	w.sp.end += int64(len(b))
	return nil
}

// finish writes the last page and the fence block.
func (w *widxWriter) finish() (widxRun, error) {
	if w.n == 0 {
		w.off = w.sp.end
	}
	if w.inPage > 0 {
		if err := w.flushPage(); err != nil {
			return widxRun{}, err
		}
	}
	b := make([]byte, 4*len(w.fences)+crcSize)
	for k, f := range w.fences {
		binary.LittleEndian.PutUint32(b[4*k:], f)
	}
	binary.LittleEndian.PutUint32(b[4*len(w.fences):], crc32.Checksum(b[:4*len(w.fences)], crcTable))
	if err := w.raw(b); err != nil {
		return widxRun{}, err
	}
	return widxRun{Off: w.off, N: w.n, fences: w.fences}, nil
}

// widxIter reads a run in order, widxIterPages pages at a time.
type widxIter struct {
	sp   *spill
	r    *widxRun
	buf  []byte
	page int // next page to read
	at   []widxEntry
	k    int
	e    widxEntry
	ok   bool
}

const widxIterPages = 128

func (it *widxIter) next() error {
	if it.k < len(it.at) {
		it.e, it.ok = it.at[it.k], true
		it.k++
		return nil
	}
	if it.page >= it.r.pages() {
		it.ok = false
		return nil
	}
	last := min(it.page+widxIterPages, it.r.pages())
	off, _ := it.r.pageSpan(it.page)
	endOff, n := it.r.pageSpan(last - 1)
	endOff += int64(8*n + crcSize)
	size := int(endOff - off)
	if cap(it.buf) < size {
		it.buf = make([]byte, size)
	}
	it.buf = it.buf[:size]
	if _, err := it.sp.file.ReadAt(it.buf, off); err != nil {
		return fmt.Errorf("engine: reading the write index: %w", err)
	}
	it.at = it.at[:0]
	for p := it.page; p < last; p++ {
		pOff, cnt := it.r.pageSpan(p)
		b := it.buf[pOff-off : pOff-off+int64(8*cnt+crcSize)]
		var err error
		if it.at, err = it.sp.decodePage(it.at, b, cnt, pOff); err != nil {
			return err
		}
	}
	it.page, it.k = last, 0
	return it.next()
}

// checkPage checks a page of cnt entries at off against its CRC.
func (s *spill) checkPage(b []byte, cnt int, off int64) error {
	n := 8 * cnt
	if got, want := crc32.Checksum(b[:n], crcTable), binary.LittleEndian.Uint32(b[n:]); got != want {
		return s.corrupt("write index page", off, fmt.Sprintf("checksum %08x, recorded %08x", got, want))
	}
	return nil
}

// decodePage checks and decodes a page of cnt entries at off.
func (s *spill) decodePage(dst []widxEntry, b []byte, cnt int, off int64) ([]widxEntry, error) {
	if err := s.checkPage(b, cnt, off); err != nil {
		return nil, err
	}
	for k := range cnt {
		dst = append(dst, widxEntry{binary.LittleEndian.Uint32(b[8*k:]), binary.LittleEndian.Uint32(b[8*k+4:])})
	}
	return dst, nil
}

// readFences reads run r's fence block back (a restore, W3).
func (s *spill) readFences(r *widxRun) error {
	p := r.pages()
	b := make([]byte, 4*p+crcSize)
	off := r.fenceOff()
	if r.Off < 0 || r.end() > s.end {
		return s.corrupt("write index fences", off, "beyond the file's end")
	}
	if _, err := s.file.ReadAt(b, off); err != nil {
		return fmt.Errorf("engine: reading the write index: %w", err)
	}
	if got, want := crc32.Checksum(b[:4*p], crcTable), binary.LittleEndian.Uint32(b[4*p:]); got != want {
		return s.corrupt("write index fences", off, fmt.Sprintf("checksum %08x, recorded %08x", got, want))
	}
	r.fences = make([]uint32, p)
	for k := range r.fences {
		r.fences[k] = binary.LittleEndian.Uint32(b[4*k:])
	}
	return nil
}

// lookupWrites returns, sorted and without repeats, the release
// positions the index holds under any of the hashes qs (sorted, without
// repeats): a superset of the possible writers they stand for (W1).
// In each run it reads only the pages whose fences can hold a hash of
// qs, neighbouring ones (at most widxGap apart) with one read.
func (o *Online) lookupWrites(qs []uint32) ([]int, error) {
	x, sp := &o.widx, &o.spill
	// qs is sorted: a page's entries (sorted by hash) are matched by
	// binary searches (matchPage), not a map lookup per entry, which was
	// half of the lookups' CPU on the anomaly storm.
	var out []int
	for _, e := range x.pending {
		if _, ok := slices.BinarySearch(qs, e.h); ok {
			out = append(out, int(e.pos))
		}
	}
	if len(x.runs) > 0 {
		if err := sp.w.Flush(); err != nil {
			return nil, fmt.Errorf("engine: write index: %w", err)
		}
	}
	var pages []int
	for k := range x.runs {
		r := &x.runs[k]
		if r.N == 0 {
			continue
		}
		// Entries equal to q lie in the pages from the last whose fence
		// is below q (q may begin in its tail) to the last whose fence
		// is q.
		pages = pages[:0]
		for _, q := range qs {
			lo := sort.Search(len(r.fences), func(j int) bool { return r.fences[j] >= q })
			hi := sort.Search(len(r.fences), func(j int) bool { return r.fences[j] > q })
			lo = max(lo-1, 0)
			for p := lo; p < max(hi, lo+1) && p < len(r.fences); p++ {
				if len(pages) == 0 || pages[len(pages)-1] < p {
					pages = append(pages, p)
				}
			}
		}
		for j := 0; j < len(pages); {
			// One read for pages[j..k], none more than widxGap apart.
			k := j
			for k+1 < len(pages) && pages[k+1]-pages[k] <= widxGap {
				k++
			}
			first, last := pages[j], pages[k]
			off, _ := r.pageSpan(first)
			endOff, n := r.pageSpan(last)
			endOff += int64(8*n + crcSize)
			if cap(x.page) < int(endOff-off) {
				x.page = make([]byte, endOff-off)
			}
			b := x.page[:endOff-off]
			if _, err := sp.file.ReadAt(b, off); err != nil {
				return nil, fmt.Errorf("engine: reading the write index: %w", err)
			}
			for _, p := range pages[j : k+1] {
				pOff, cnt := r.pageSpan(p)
				pb := b[pOff-off : pOff-off+int64(8*cnt+crcSize)]
				if err := sp.checkPage(pb, cnt, pOff); err != nil {
					return nil, err
				}
				out = matchPage(out, pb, cnt, qs)
			}
			j = k + 1
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// matchPage appends to out the positions of the entries of a checked
// page b of cnt entries (sorted by hash, then position) whose hash is in
// qs (sorted, without repeats).
func matchPage(out []int, b []byte, cnt int, qs []uint32) []int {
	if cnt == 0 {
		return out
	}
	h := func(k int) uint32 { return binary.LittleEndian.Uint32(b[8*k:]) }
	first, last := h(0), h(cnt-1)
	k, _ := slices.BinarySearch(qs, first)
	i := 0
	for ; k < len(qs) && qs[k] <= last; k++ {
		q := qs[k]
		// The first entry at or above q, from the last one found.
		lo, hi := i, cnt
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if h(m) < q {
				lo = m + 1
			} else {
				hi = m
			}
		}
		for i = lo; i < cnt && h(i) == q; i++ {
			out = append(out, int(binary.LittleEndian.Uint32(b[8*i+4:])))
		}
	}
	return out
}

// widxGap is how far apart two pages a lookup needs may be and still be
// read together: reading up to widxGap-1 pages for nothing (2 KB) costs
// less than a read of their own.
const widxGap = 4

// widxQueries are the hashes of what the bodies read: every key (its
// appends) and every register (key, value) (its writes), sorted.
func (x *writeIndex) queries(keys map[history.Key]bool, values func(func(k history.Key, v history.Value))) []uint32 {
	var qs []uint32
	for k := range keys {
		qs = append(qs, x.hash('a', k, ""))
	}
	values(func(k history.Key, v history.Value) { qs = append(qs, x.hash('w', k, v)) })
	slices.Sort(qs)
	return slices.Compact(qs)
}

// copyIndexForward rewrites every run that begins below cut, without the
// entries of releases below floor (W2).
func (o *Online) copyIndexForward(cut int64) error {
	x := &o.widx
	if !x.on {
		return nil
	}
	for k := range x.runs {
		if x.runs[k].Off >= cut {
			continue
		}
		r, err := o.rewriteRuns(x.runs[k:k+1], o.floor)
		if err != nil {
			x.on, x.runs, x.pending = false, nil, nil
			return err
		}
		r.Chunks = x.runs[k].Chunks
		x.runs[k] = r
	}
	return nil
}

// widxSnapshot is the index in a durable snapshot (W3).
type widxSnapshot struct {
	Covered int
	Runs    []widxRun
}

func (x *writeIndex) snapshot() *widxSnapshot {
	if !x.on {
		return nil
	}
	return &widxSnapshot{Covered: x.covered, Runs: slices.Clone(x.runs)}
}

// restoreIndex takes a durable snapshot's index back: the runs' fences
// from the file, pending from the bodies after them (W3). Without one
// the index stays off.
func (o *Online) restoreIndex(s *widxSnapshot, n int) error {
	x := &o.widx
	x.on, x.runs, x.pending = false, nil, nil
	if s == nil || !o.evicting {
		return nil
	}
	if s.Covered < 0 || s.Covered > n || s.Covered%widxEvery != 0 {
		return fmt.Errorf("write index covers %d of %d released", s.Covered, n)
	}
	runs := slices.Clone(s.Runs)
	for k := range runs {
		if runs[k].N < 0 {
			return fmt.Errorf("write index run of %d entries", runs[k].N)
		}
		if err := o.spill.readFences(&runs[k]); err != nil {
			return err
		}
	}
	for i := s.Covered; i < n; i++ {
		t, err := o.body(i)
		if err != nil {
			return err
		}
		x.add(i, t.Ops)
	}
	x.runs, x.covered, x.on = runs, s.Covered, true
	return nil
}

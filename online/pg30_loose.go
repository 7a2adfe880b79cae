package online

import (
	"fmt"
	"slices"
)

// Loose offsets merged back into their chunk's block (docs/SEMANTICS.md
// §5 "Loose offsets go back to their block").
//
// A sparse chunk is dropped with its ghosts still in memory: each gets a
// loose offset of 0, and when it is spilled later, its record's offset,
// loose for ever, since the chunk's block was written with 0 for it. On
// the PostgreSQL recording an eighth of the stream ended up in the loose
// map (117K entries after 982K transactions), the one table of the body
// file that still grew with the stream.

// looseMin is the loose map's size below which no merge is tried.
const looseMin = 4096

// mergeLoose writes a new block for every written-out chunk whose loose
// offsets are all records (none of its bodies is in memory, none gone):
// its old block overlaid with them. Their entries leave the map. It runs
// once the map has doubled since the last merge (amortized: a merge reads
// the map once, and every block it writes has at least one entry).
func (s *spill) mergeLoose() error {
	if len(s.loose) < max(looseMin, s.looseNext) {
		return nil
	}
	defer func() { s.looseNext = 2 * len(s.loose) }()
	// Per chunk: whether every loose offset of it is a record's.
	ok := map[int]bool{}
	for i, off := range s.loose {
		c := i >> logChunkBits
		good, seen := ok[c]
		if !seen {
			good = c < len(s.block) && s.block[c] > 0 && s.at[c] == nil && c >= s.floorChunk
		}
		ok[c] = good && off > 0
	}
	var chunks []int
	for c, good := range ok {
		if good {
			chunks = append(chunks, c)
		}
	}
	if len(chunks) == 0 {
		return nil
	}
	slices.Sort(chunks) // the file's content independent of map order
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("engine: merging spilled offsets: %w", err)
	}
	offs := make([]int64, logChunkSize)
	for _, c := range chunks {
		if err := s.readOffsets(c, offs); err != nil {
			return err
		}
		base := c << logChunkBits
		for k := range offs {
			if off, in := s.loose[base+k]; in {
				offs[k] = off
			}
		}
		if err := s.writeOffsets(c, offs, "merging spilled"); err != nil {
			return err
		}
		s.merged++
		for k := range logChunkSize {
			delete(s.loose, base+k)
		}
		if s.offsChunk == c {
			s.offsChunk = -1
		}
	}
	return nil
}

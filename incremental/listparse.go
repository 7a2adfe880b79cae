package incremental

import "github.com/streamcheck/streamcheck/history"

// parseList enumerates the ways list can be the concatenation of whole
// append sequences of key k (one per appender, each appender at most
// once, each admitted by ok) after a prefix of the initial list of each
// length in starts, up to max parses; cut reports that the bound was
// reached (parses were left out). The SAT encodings (encode.go,
// listParses) and the weak levels (check_weak.go) share it: a parse is a
// candidate version of the key, its last appender the one read from
// (docs/SEMANTICS.md §1 "Lists at the weak levels").
func (p *prepared) parseList(k int32, list []history.Value, starts []int, ok func(a int32) bool, max int) (parses []listParse, cut bool) {
	var seq []int32
	// inSeq mirrors seq as a set: a parse through many appenders scanned
	// seq at every step, quadratic in their number (issue 20, item 6).
	inSeq := map[int32]bool{}
	// The appenders that may continue a parse at pos are those appending
	// list[pos] (appendersOf), rather than every appender of the key:
	// long lists made the walk quadratic.
	var walk func(pos int)
	walk = func(pos int) {
		if len(parses) >= max {
			cut = true
			return
		}
		if pos == len(list) {
			parses = append(parses, listParse{appenders: append([]int32(nil), seq...)})
			return
		}
		for _, a := range p.appendersOf[k][list[pos]] {
			if !ok(a) || inSeq[a] {
				continue
			}
			app := p.txns[a].appendsTo(k)
			if len(app) == 0 || pos+len(app) > len(list) || !equalValues(list[pos:pos+len(app)], app) {
				continue
			}
			seq = append(seq, a)
			inSeq[a] = true
			walk(pos + len(app))
			delete(inSeq, a)
			seq = seq[:len(seq)-1]
		}
	}
	for _, j := range starts {
		before := len(parses)
		walk(j)
		for i := before; i < len(parses); i++ {
			parses[i].initLen = j
		}
	}
	return parses, cut
}

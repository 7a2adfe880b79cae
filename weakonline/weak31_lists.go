package weakonline

import "github.com/streamcheck/streamcheck/history"

// The fast path's per-node lists (issue 26, docs/SEMANTICS.md §5 "The
// per-node lists in blocks"): a node's edges both ways, its finals and
// external reads, at causal its clock and clock successors, its chosen
// sources, the source of each read and its reads of the initial state.
// They were nine slices parallel to the engine's indices, 216 bytes of
// slice headers for every transaction ever released: at causal, where
// indices are never renumbered, that stayed for every retired node, and
// each doubling copied all of them. They are one struct per node, held
// in blocks of listBlock nodes: growing allocates a block (nothing is
// copied), a node's lists sit together (one cache line for a read's
// edges and its finals), and at causal a block whose every node has
// retired and given its lists back (weak29_causal.go) is freed whole.
// Nothing but the layout changes: every list reads and writes as the
// parallel slice's element did (a block is freed only when every list
// in it is nil, and comes back all nil on an access: listsGone, nl).

const (
	listBits  = 8
	listBlock = 1 << listBits
	listMask  = listBlock - 1
)

type nodeLists struct {
	// Adjacency, and the transaction's finals and external reads.
	out, in       []int32
	finals, reads []kv
	// causal: every node's causal past in the instance as a vector clock
	// over the sessions (the highest position of each session in the
	// past, the node included); an open node's reads are not in the
	// instance, so its past is its session predecessor's and itself.
	// succ are the nodes whose clock is computed from a node's: its
	// session successor and the closed readers that chose it.
	clock, succ []int32
	// srcs: the chosen sources (nodes) of a closed node's reads; froms
	// (causal): the source of each read (-1: initial), parallel to reads.
	srcs, froms []int32
	// initReads: under an unknown initial state, a closed node's reads
	// whose chosen source is the initial state (a list read as its key
	// marked listFinal). Retirement asks whether each is forced, a read
	// no transaction but the initial state can explain (R7).
	initReads []kv
}

type listChunk [listBlock]nodeLists

// listBlocks is the blocks, the number of nodes they cover (what the slices'
// length was), and per block how many of its nodes retired and gave
// every list back (-1: never to be freed, once reopened).
type listBlocks struct {
	blocks []*listChunk
	n      int
	gone   []int32
	// freed and reopened count blocks freed, and freed blocks a later
	// access brought back (each an empty block: what every one of its
	// nodes held when it was freed).
	freed, reopened int
}

// nl is node n's lists. A freed block comes back empty, never to be
// freed again: its nodes' lists were all nil when it left, so a read
// finds what the slices would have held.
func (f *fast) nl(n int) *nodeLists {
	b := f.nls.blocks[n>>listBits]
	if b == nil {
		b = new(listChunk)
		f.nls.blocks[n>>listBits] = b
		f.nls.gone[n>>listBits] = -1
		f.nls.reopened++
	}
	return &b[n&listMask]
}

// growLists makes the blocks cover n nodes, the new ones' lists nil.
func (f *fast) growLists(n int) {
	for len(f.nls.blocks)*listBlock < n {
		f.nls.blocks = append(f.nls.blocks, new(listChunk))
		f.nls.gone = append(f.nls.gone, 0)
	}
	f.nls.n = max(f.nls.n, n)
}

// truncLists makes the blocks cover the first k nodes, the lists of the
// nodes after them nil (as clearing the slices' tails did), and drops
// the blocks past them.
func (f *fast) truncLists(k int) {
	for i := k; i < f.nls.n; i++ {
		if f.nls.blocks[i>>listBits] != nil {
			*f.nl(i) = nodeLists{}
		}
	}
	nb := (k + listMask) >> listBits
	clear(f.nls.blocks[nb:])
	f.nls.blocks = f.nls.blocks[:nb]
	f.nls.gone = f.nls.gone[:nb]
	f.nls.n = k
}

// listsGone records that retired node r gave back its last lists (its
// clock and successors, weak29_causal.go); its block is freed when all
// its nodes have, every list in it nil.
func (f *fast) listsGone(r int32) {
	c := r >> listBits
	if f.nls.gone[c] < 0 {
		return
	}
	if f.nls.gone[c]++; f.nls.gone[c] < listBlock {
		return
	}
	// Freed only if every list in it is nil now, so that the empty
	// block nl brings back on a later access is what it held: the count
	// says when to look, this decides.
	b := f.nls.blocks[c]
	for k := range b {
		if !b[k].empty() {
			f.nls.gone[c] = -1
			return
		}
	}
	f.nls.blocks[c] = nil
	f.nls.freed++
}

// empty reports whether every list of l is nil.
func (l *nodeLists) empty() bool {
	return l.out == nil && l.in == nil && l.finals == nil && l.reads == nil && l.clock == nil &&
		l.succ == nil && l.srcs == nil && l.froms == nil && l.initReads == nil
}

// noLists records, at causal, that index i is released as no node (an
// aborted transaction, an unknown one that did not commit or that the
// witness left out): its lists stay nil, so for its block it counts as
// a node that gave them back. Without it a block with one aborted
// transaction was never freed (generated streams abort some).
func (f *fast) noLists(i int) {
	if f.lv == history.Causal {
		f.listsGone(int32(i))
	}
}

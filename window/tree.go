package window

import "math"

// minTree is a tournament tree over the partitions: each leaf holds a
// partition's watermark (key) and latest sign of life (ref), or +∞ for
// both while the partition is idle, and each inner node the componentwise
// minimum of its children. It replaces a scan over P partitions per Add:
// with partitions delivering in turn, the partition that delivers next is
// usually the one furthest behind, the holder of the minimum, so a cached
// minimum would be rescanned at almost every Add.
//
// A leaf of a partition that is not idle can itself hold math.MaxInt64 (a
// start at the end of time with lateness 0), so "some partition is not
// idle" is counted separately (Window.active), never read off the root.
type minTree struct {
	size  int // leaves, a power of two >= P
	nodes []treeNode
}

type treeNode struct{ key, ref int64 }

var idleLeaf = treeNode{math.MaxInt64, math.MaxInt64}

func newMinTree(p int) minTree {
	size := 1
	for size < p {
		size *= 2
	}
	t := minTree{size: size, nodes: make([]treeNode, 2*size)}
	for i := range t.nodes {
		t.nodes[i] = idleLeaf
	}
	return t
}

// set replaces leaf i and fixes the path to the root: O(log P).
func (t *minTree) set(i int, v treeNode) {
	j := t.size + i
	t.nodes[j] = v
	for j > 1 {
		j /= 2
		l, r := &t.nodes[2*j], &t.nodes[2*j+1]
		t.nodes[j] = treeNode{min(l.key, r.key), min(l.ref, r.ref)}
	}
}

func (t *minTree) root() treeNode { return t.nodes[1] }

// minRefLeaf returns a partition whose ref is the minimum: O(log P).
func (t *minTree) minRefLeaf() int {
	j := 1
	for j < t.size {
		if t.nodes[2*j].ref <= t.nodes[2*j+1].ref {
			j = 2 * j
		} else {
			j = 2*j + 1
		}
	}
	return j - t.size
}

package solver

// varHeap is a binary max-heap of variables keyed by activity (EVSIDS).
// idx[v] is v's position in heap, or -1 when v is not in it.
type varHeap struct {
	heap []Var
	idx  []int32
	act  *[]float64
}

func (h *varHeap) less(a, b Var) bool {
	act := *h.act
	if act[a] != act[b] {
		return act[a] > act[b]
	}
	return a < b // ties by index keep the order deterministic
}

func (h *varHeap) grow(n int) {
	for len(h.idx) < n {
		h.idx = append(h.idx, -1)
	}
}

func (h *varHeap) contains(v Var) bool { return int(v) < len(h.idx) && h.idx[v] >= 0 }
func (h *varHeap) empty() bool         { return len(h.heap) == 0 }

func (h *varHeap) up(i int) {
	v := h.heap[i]
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(v, h.heap[p]) {
			break
		}
		h.heap[i] = h.heap[p]
		h.idx[h.heap[i]] = int32(i)
		i = p
	}
	h.heap[i] = v
	h.idx[v] = int32(i)
}

func (h *varHeap) down(i int) {
	v := h.heap[i]
	n := len(h.heap)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h.less(h.heap[c+1], h.heap[c]) {
			c++
		}
		if !h.less(h.heap[c], v) {
			break
		}
		h.heap[i] = h.heap[c]
		h.idx[h.heap[i]] = int32(i)
		i = c
	}
	h.heap[i] = v
	h.idx[v] = int32(i)
}

func (h *varHeap) insert(v Var) {
	h.grow(int(v) + 1)
	if h.idx[v] >= 0 {
		return
	}
	h.heap = append(h.heap, v)
	h.up(len(h.heap) - 1)
}

// increased restores the heap after v's activity grew.
func (h *varHeap) increased(v Var) {
	if h.contains(v) {
		h.up(int(h.idx[v]))
	}
}

func (h *varHeap) pop() Var {
	v := h.heap[0]
	last := h.heap[len(h.heap)-1]
	h.heap = h.heap[:len(h.heap)-1]
	h.idx[v] = -1
	if len(h.heap) > 0 {
		h.heap[0] = last
		h.idx[last] = 0
		h.down(0)
	}
	return v
}

// remove takes v out of the heap wherever it is (used by Retire).
func (h *varHeap) remove(v Var) {
	if !h.contains(v) {
		return
	}
	i := int(h.idx[v])
	last := h.heap[len(h.heap)-1]
	h.heap = h.heap[:len(h.heap)-1]
	h.idx[v] = -1
	if i < len(h.heap) {
		h.heap[i] = last
		h.idx[last] = int32(i)
		h.down(i)
		h.up(int(h.idx[last]))
	}
}

// rebuild re-heapifies after activities were rescaled wholesale.
func (h *varHeap) rebuild() {
	for i := len(h.heap)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

package solver

// DIMACS CNF input and output, with a small extension for the acyclicity
// theory so that tests and the `streamcheck sat` command can drive the graph
// part of the solver from files.
//
// # Format
//
// Plain DIMACS CNF as used by the SAT competitions:
//
//	c a comment line
//	p cnf <vars> <clauses>
//	1 -2 3 0
//	-1 0
//
// Rules this parser holds to (errors name the line):
//   - Comment lines start with 'c'; blank lines are ignored.
//   - Exactly one header `p cnf V C` comes before any clause or edge line.
//   - A clause is a run of nonzero literals ended by 0; it may span lines. A
//     lone 0 is the empty clause. Every literal's variable is in 1..V.
//   - The file holds exactly C clauses, and the last one ends with 0.
//   - A line starting with '%' ends the input (SATLIB's uf*/uuf* files end
//     with "%\n0\n").
//
// # Edge extension
//
// A formula may carry a directed graph whose edges must stay acyclic (the
// solver's theory). Nodes are numbered 0..N-1. The lines, which may appear
// anywhere after the header but not inside an unterminated clause, are:
//
//	n <count>                 declare count nodes (at most once, before edges)
//	b <from> <to>             base edge, always present
//	e <lit> <from> <to>       edge present iff lit is true
//	e2 <lit> <lit> <from> <to> edge present iff both literals are true
//
// A formula with edges is satisfiable iff some assignment satisfies every
// clause and leaves the graph of present edges acyclic. Edge lines are not
// DIMACS: minisat and other solvers reject them, so a formula with edges must
// only be given to this solver (or first be expanded to plain clauses).
// Self-loops are allowed: `b 3 3` makes the formula unsatisfiable and
// `e 5 3 3` forces literal 5 false.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxDIMACSVars bounds the variable and node counts a header may declare, so
// a corrupt or hostile file cannot make the parser or the solver allocate
// without bound, and every literal fits a Lit.
const MaxDIMACSVars = 1 << 28

// CNF is a formula in DIMACS form: clauses over variables 1..NumVars as
// signed integers, plus an optional graph for the acyclicity theory.
type CNF struct {
	NumVars int
	// Clauses holds nonzero DIMACS literals; an empty clause is allowed and
	// makes the formula unsatisfiable.
	Clauses [][]int
	// NumNodes is the number of graph nodes, numbered 0..NumNodes-1.
	NumNodes int
	Edges    []CNFEdge
}

// CNFEdge is a graph edge From->To that is present iff every nonzero
// condition literal among A and B is true. A == B == 0 is a base edge
// (always present); B == 0 alone is an edge guarded by A.
type CNFEdge struct {
	A, B     int
	From, To int
}

// DIMACSError is a parse error with the 1-based line it was found on.
type DIMACSError struct {
	Line int
	Msg  string
}

func (e *DIMACSError) Error() string {
	return fmt.Sprintf("dimacs: line %d: %s", e.Line, e.Msg)
}

// ParseDIMACS reads a DIMACS CNF file, with the edge extension described in
// this file's comment. Errors are *DIMACSError values naming the line, or a
// wrapped read error.
func ParseDIMACS(r io.Reader) (*CNF, error) {
	p := &dimacsParser{br: bufio.NewReaderSize(r, 1<<16)}
	return p.parse()
}

type dimacsParser struct {
	br   *bufio.Reader
	line int
	long []byte // accumulates a line longer than br's buffer

	cnf        CNF
	haveHeader bool
	declared   int // clause count from the header
	headerLine int
	haveNodes  bool
	// flat holds every literal of every finished clause; ends[i] is the end
	// of clause i in flat. One backing array instead of one per clause.
	flat      []int
	ends      []int
	open      bool // a clause has literals but no terminating 0 yet
	openLine  int
	clauseBeg int
}

func (p *dimacsParser) errf(format string, args ...any) error {
	return &DIMACSError{Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

// readLine returns the next line without its terminator, or io.EOF.
func (p *dimacsParser) readLine() ([]byte, error) {
	p.long = p.long[:0]
	for {
		b, err := p.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			p.long = append(p.long, b...)
			continue
		}
		if len(p.long) > 0 {
			p.long = append(p.long, b...)
			b = p.long
		}
		if err == io.EOF {
			if len(b) == 0 {
				return nil, io.EOF
			}
			p.line++
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("dimacs: read after line %d: %w", p.line, err)
		}
		p.line++
		return b[:len(b)-1], nil
	}
}

func dimacsIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

// fields splits a line on DIMACS whitespace into dst, reusing its storage.
func dimacsFields(dst [][]byte, line []byte) [][]byte {
	dst = dst[:0]
	i := 0
	for i < len(line) {
		for i < len(line) && dimacsIsSpace(line[i]) {
			i++
		}
		j := i
		for j < len(line) && !dimacsIsSpace(line[j]) {
			j++
		}
		if j > i {
			dst = append(dst, line[i:j])
		}
		i = j
	}
	return dst
}

// atoi parses a decimal integer with an optional sign, rejecting anything
// else (strconv.Atoi would also take "+5", which DIMACS does not have).
func dimacsAtoi(tok []byte) (int, bool) {
	if len(tok) == 0 || len(tok) > 19 {
		return 0, false
	}
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
		if len(tok) == 0 {
			return 0, false
		}
	}
	n := 0
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n < 0 { // overflow of a 19-digit number
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func (p *dimacsParser) parse() (*CNF, error) {
	var toks [][]byte
	for {
		line, err := p.readLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		toks = dimacsFields(toks, line)
		if len(toks) == 0 {
			continue
		}
		first := toks[0]
		switch {
		case first[0] == 'c':
			continue
		case first[0] == '%':
			goto done
		case bytes.Equal(first, []byte("p")):
			if err := p.header(toks); err != nil {
				return nil, err
			}
		case bytes.Equal(first, []byte("n")), bytes.Equal(first, []byte("b")),
			bytes.Equal(first, []byte("e")), bytes.Equal(first, []byte("e2")):
			if err := p.graphLine(toks); err != nil {
				return nil, err
			}
		default:
			if err := p.clauseLine(toks); err != nil {
				return nil, err
			}
		}
	}
done:
	if !p.haveHeader {
		return nil, &DIMACSError{Line: max(p.line, 1), Msg: "missing header `p cnf <vars> <clauses>`"}
	}
	if p.open {
		return nil, &DIMACSError{Line: p.openLine, Msg: "clause not terminated by 0 at end of input"}
	}
	if len(p.ends) != p.declared {
		return nil, &DIMACSError{Line: p.headerLine,
			Msg: fmt.Sprintf("header declares %d clauses, the file has %d", p.declared, len(p.ends))}
	}
	c := p.cnf
	c.Clauses = make([][]int, len(p.ends))
	beg := 0
	for i, end := range p.ends {
		// Full slice expressions so that appending to one clause can never
		// overwrite the next.
		c.Clauses[i] = p.flat[beg:end:end]
		beg = end
	}
	return &c, nil
}

func (p *dimacsParser) header(toks [][]byte) error {
	if p.haveHeader {
		return p.errf("second header (the first is on line %d)", p.headerLine)
	}
	if len(toks) != 4 || string(toks[1]) != "cnf" {
		return p.errf("malformed header, want `p cnf <vars> <clauses>`")
	}
	v, ok1 := dimacsAtoi(toks[2])
	c, ok2 := dimacsAtoi(toks[3])
	if !ok1 || !ok2 || v < 0 || c < 0 {
		return p.errf("malformed header, want `p cnf <vars> <clauses>` with counts >= 0")
	}
	if v > MaxDIMACSVars {
		return p.errf("header declares %d variables, more than the limit %d", v, MaxDIMACSVars)
	}
	p.haveHeader, p.headerLine = true, p.line
	p.cnf.NumVars, p.declared = v, c
	// Trust the header only up to a bound when preallocating: it may lie.
	p.ends = make([]int, 0, min(c, 1<<16))
	p.flat = make([]int, 0, min(3*c, 1<<18))
	return nil
}

// lit parses a nonzero literal whose variable is declared.
func (p *dimacsParser) lit(tok []byte) (int, error) {
	n, ok := dimacsAtoi(tok)
	if !ok {
		return 0, p.errf("%q is not an integer", tok)
	}
	if n == 0 {
		return 0, p.errf("literal 0 where a nonzero literal is needed")
	}
	if n > p.cnf.NumVars || -n > p.cnf.NumVars {
		return 0, p.errf("literal %d is outside the %d variables of the header", n, p.cnf.NumVars)
	}
	return n, nil
}

func (p *dimacsParser) node(tok []byte) (int, error) {
	n, ok := dimacsAtoi(tok)
	if !ok {
		return 0, p.errf("node %q is not an integer", tok)
	}
	if n < 0 || n >= p.cnf.NumNodes {
		return 0, p.errf("node %d is outside 0..%d declared by `n`", n, p.cnf.NumNodes-1)
	}
	return n, nil
}

func (p *dimacsParser) graphLine(toks [][]byte) error {
	if !p.haveHeader {
		return p.errf("`%s` line before the header", toks[0])
	}
	if p.open {
		return p.errf("`%s` line inside the clause begun on line %d", toks[0], p.openLine)
	}
	kind := string(toks[0])
	if kind == "n" {
		if p.haveNodes {
			return p.errf("second `n` line")
		}
		if len(toks) != 2 {
			return p.errf("want `n <count>`")
		}
		n, ok := dimacsAtoi(toks[1])
		if !ok || n < 0 || n > MaxDIMACSVars {
			return p.errf("node count %q is not an integer in 0..%d", toks[1], MaxDIMACSVars)
		}
		p.haveNodes, p.cnf.NumNodes = true, n
		return nil
	}
	if !p.haveNodes {
		return p.errf("`%s` line before the `n <count>` line", kind)
	}
	want := map[string]int{"b": 3, "e": 4, "e2": 5}[kind]
	if len(toks) != want {
		return p.errf("want %s", map[string]string{
			"b": "`b <from> <to>`", "e": "`e <lit> <from> <to>`", "e2": "`e2 <lit> <lit> <from> <to>`",
		}[kind])
	}
	var e CNFEdge
	var err error
	nlits := want - 3
	if nlits >= 1 {
		if e.A, err = p.lit(toks[1]); err != nil {
			return err
		}
	}
	if nlits == 2 {
		if e.B, err = p.lit(toks[2]); err != nil {
			return err
		}
	}
	if e.From, err = p.node(toks[1+nlits]); err != nil {
		return err
	}
	if e.To, err = p.node(toks[2+nlits]); err != nil {
		return err
	}
	p.cnf.Edges = append(p.cnf.Edges, e)
	return nil
}

func (p *dimacsParser) clauseLine(toks [][]byte) error {
	if !p.haveHeader {
		return p.errf("clause before the header `p cnf <vars> <clauses>`")
	}
	for _, tok := range toks {
		n, ok := dimacsAtoi(tok)
		if !ok {
			return p.errf("%q is not an integer", tok)
		}
		if n == 0 {
			if len(p.ends) == p.declared {
				return p.errf("more clauses than the %d the header declares", p.declared)
			}
			p.ends = append(p.ends, len(p.flat))
			p.open = false
			continue
		}
		if n > p.cnf.NumVars || -n > p.cnf.NumVars {
			return p.errf("literal %d is outside the %d variables of the header", n, p.cnf.NumVars)
		}
		if !p.open {
			p.open, p.openLine = true, p.line
		}
		p.flat = append(p.flat, n)
	}
	return nil
}

// Validate reports whether c is well formed: every literal and node is in
// range. ParseDIMACS only returns valid formulas; generators and callers that
// build a CNF by hand can check theirs.
func (c *CNF) Validate() error {
	if c.NumVars < 0 || c.NumVars > MaxDIMACSVars || c.NumNodes < 0 || c.NumNodes > MaxDIMACSVars {
		return fmt.Errorf("dimacs: %d variables and %d nodes, want 0..%d", c.NumVars, c.NumNodes, MaxDIMACSVars)
	}
	okLit := func(l int) bool { return l != 0 && l <= c.NumVars && -l <= c.NumVars }
	for i, cl := range c.Clauses {
		for _, l := range cl {
			if !okLit(l) {
				return fmt.Errorf("dimacs: clause %d: literal %d outside 1..%d", i, l, c.NumVars)
			}
		}
	}
	for i, e := range c.Edges {
		if (e.A == 0 && e.B != 0) || (e.A != 0 && !okLit(e.A)) || (e.B != 0 && !okLit(e.B)) {
			return fmt.Errorf("dimacs: edge %d: bad condition literals %d %d", i, e.A, e.B)
		}
		if e.From < 0 || e.From >= c.NumNodes || e.To < 0 || e.To >= c.NumNodes {
			return fmt.Errorf("dimacs: edge %d: node outside 0..%d", i, c.NumNodes-1)
		}
	}
	return nil
}

// WriteDIMACS writes c in the format ParseDIMACS reads. The `n`, `b`, `e`
// and `e2` lines are written only when c has nodes or edges, so a plain
// formula comes out as plain DIMACS any solver reads.
func WriteDIMACS(w io.Writer, c *CNF) error {
	if err := c.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	buf := make([]byte, 0, 64)
	buf = fmt.Appendf(buf, "p cnf %d %d\n", c.NumVars, len(c.Clauses))
	bw.Write(buf)
	if c.NumNodes > 0 || len(c.Edges) > 0 {
		fmt.Fprintf(bw, "n %d\n", c.NumNodes)
		for _, e := range c.Edges {
			switch {
			case e.A == 0:
				fmt.Fprintf(bw, "b %d %d\n", e.From, e.To)
			case e.B == 0:
				fmt.Fprintf(bw, "e %d %d %d\n", e.A, e.From, e.To)
			default:
				fmt.Fprintf(bw, "e2 %d %d %d %d\n", e.A, e.B, e.From, e.To)
			}
		}
	}
	for _, cl := range c.Clauses {
		buf = buf[:0]
		for _, l := range cl {
			buf = strconv.AppendInt(buf, int64(l), 10)
			buf = append(buf, ' ')
		}
		buf = append(buf, '0', '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

// Verify reports whether the assignment value (called with positive and
// negative DIMACS literals) satisfies c: every clause has a true literal and
// the edges present under it form no cycle. It is independent of the solver
// (its own clause walk and Kahn's algorithm), so tests use it as the oracle
// for models. Cost: O(total literals + nodes + edges).
func (c *CNF) Verify(value func(dimacsLit int) bool) error {
	for i, cl := range c.Clauses {
		sat := false
		for _, l := range cl {
			if value(l) {
				sat = true
				break
			}
		}
		if !sat {
			return fmt.Errorf("dimacs: clause %d %v is false", i, cl)
		}
	}
	if c.NumNodes == 0 {
		return nil
	}
	indeg := make([]int, c.NumNodes)
	adj := make([][]int, c.NumNodes)
	for _, e := range c.Edges {
		if (e.A != 0 && !value(e.A)) || (e.B != 0 && !value(e.B)) {
			continue
		}
		adj[e.From] = append(adj[e.From], e.To)
		indeg[e.To]++
	}
	queue := make([]int, 0, c.NumNodes)
	for n, d := range indeg {
		if d == 0 {
			queue = append(queue, n)
		}
	}
	for i := 0; i < len(queue); i++ {
		for _, m := range adj[queue[i]] {
			if indeg[m]--; indeg[m] == 0 {
				queue = append(queue, m)
			}
		}
	}
	if len(queue) < c.NumNodes {
		for n, d := range indeg {
			if d > 0 {
				return fmt.Errorf("dimacs: present edges form a cycle (node %d is on or behind one)", n)
			}
		}
	}
	return nil
}

// ErrLoadVars is returned by Load when the solver already has variables or
// nodes, which would shift the DIMACS numbering.
var ErrLoadVars = errors.New("solver: Load needs a solver with no variables and no nodes")

// Load adds c's variables, nodes, edges and clauses to s, which must be
// fresh: DIMACS variable v becomes the solver variable of LitFromDIMACS(v).
// It returns the solver node of each DIMACS node, and ok == false when the
// solver already found the formula unsatisfiable while loading (an empty
// clause, conflicting units, a cycle of base edges); then Solve returns Unsat.
//
// Clauses are cleaned first (duplicate literals dropped, tautologies
// skipped), so the solver sees what it expects from a careful caller.
// Self-loops are turned into clauses rather than edges: an edge n->n is a
// cycle by itself, so its condition must be false.
func (c *CNF) Load(s *Solver) (nodes []Node, ok bool, err error) {
	if err := c.Validate(); err != nil {
		return nil, false, err
	}
	if s.NumVars() != 0 || s.NumNodes() != 0 {
		return nil, false, ErrLoadVars
	}
	for s.NumVars() < c.NumVars {
		s.NewVar()
	}
	nodes = make([]Node, c.NumNodes)
	for i := range nodes {
		nodes[i] = s.NewNode()
	}
	ok = true
	for _, e := range c.Edges {
		from, to := nodes[e.From], nodes[e.To]
		switch {
		case e.From == e.To && e.A == 0:
			ok = s.AddClause() && ok
		case e.From == e.To && e.B == 0:
			ok = s.AddClause(LitFromDIMACS(-e.A)) && ok
		case e.From == e.To:
			ok = s.AddClause(LitFromDIMACS(-e.A), LitFromDIMACS(-e.B)) && ok
		case e.A == 0:
			ok = s.AddBaseEdge(from, to) && ok
		case e.B == 0:
			s.AddEdge(LitFromDIMACS(e.A), from, to)
		default:
			s.AddEdge2(LitFromDIMACS(e.A), LitFromDIMACS(e.B), from, to)
		}
	}
	// seen[v] records the sign of v already in the current clause, stamped
	// with the clause index so it never needs clearing.
	type mark struct {
		clause int
		sign   int8
	}
	seen := make([]mark, c.NumVars+1)
	lits := make([]Lit, 0, 16)
clauses:
	for i, cl := range c.Clauses {
		lits = lits[:0]
		for _, l := range cl {
			v, sign := l, int8(1)
			if l < 0 {
				v, sign = -l, -1
			}
			if seen[v].clause == i+1 {
				if seen[v].sign != sign {
					continue clauses // tautology: always true
				}
				continue // duplicate
			}
			seen[v] = mark{clause: i + 1, sign: sign}
			lits = append(lits, LitFromDIMACS(l))
		}
		ok = s.AddClause(lits...) && ok
	}
	return nodes, ok, nil
}

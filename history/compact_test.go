package history

import (
	"encoding/json"
	"testing"
)

func TestParseCompactNotation(t *testing.T) {
	h, err := ParseCompact("W[0,100] w x1, w y7 · T[10,20] r x1 (session c) · U[30,40] w x2 (unknown, session c)\nL r l [1 2 3], append l 4, r x null")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 4 {
		t.Fatalf("got %d txns", len(h.Txns))
	}
	w := h.Txns[0]
	if w.ID != "W" || !w.HasTime || w.Start != 0 || w.End != 100 || len(w.Ops) != 2 || w.Ops[1].Key != StringValue("y") || w.Ops[1].Value != IntValue(7) {
		t.Errorf("W = %+v", w)
	}
	if u := h.Txns[2]; u.Status != Unknown || u.Session != "c" || !u.HasSession {
		t.Errorf("U = %+v", u)
	}
	l := h.Txns[3]
	if l.HasTime || !l.Ops[0].IsList || len(l.Ops[0].List) != 3 || l.Ops[1].Kind != Append || l.Ops[2].Value != Null {
		t.Errorf("L = %+v", l)
	}
	if got, want := h.Txns[2].Compact(), "U[30,40] w x 2 (unknown, session c)"; got != want {
		t.Errorf("Compact = %q, want %q", got, want)
	}
}

func TestValidateNamesField(t *testing.T) {
	for _, tc := range []struct{ text, field string }{
		{"A[0,10] w x1 · A[20,30] w x2", "id"},
		{"A[10,0] w x1", "end"},
		{"A w x1 · B append x 2", "ops"},
	} {
		h, err := ParseCompact(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		err = h.Validate()
		he, ok := err.(*Error)
		if !ok || he.Field != tc.field {
			t.Errorf("%s: got %v, want field %s", tc.text, err, tc.field)
		}
	}
}

func TestPrecedesWidensBySkewAndUnknownNeverEnds(t *testing.T) {
	h, _ := ParseCompact("A[0,10] w x1 · B[20,30] w x2 · U[0,10] w x3 (unknown)")
	a, b, u := &h.Txns[0], &h.Txns[1], &h.Txns[2]
	o := DefaultOptions()
	if !o.Precedes(a, b) || o.Precedes(b, a) || o.Precedes(a, a) {
		t.Error("Δ=0 order wrong")
	}
	o.Skew = 5
	if !o.Precedes(a, b) {
		t.Error("Δ=5: 10+5 <= 20-5 must hold")
	}
	o.Skew = 6
	if o.Precedes(a, b) {
		t.Error("Δ=6: 10+6 > 20-6")
	}
	o.Skew = 0
	if o.Precedes(u, b) {
		t.Error("unknown with no in-doubt horizon never ends")
	}
	o.InDoubt = 10
	if !o.Precedes(u, b) {
		t.Error("unknown with horizon 10 ends at 20")
	}
}

func TestPrecedesPointTransactionsAtOneInstantAreConcurrent(t *testing.T) {
	h, _ := ParseCompact("A[5,5] w x1 · B[5,5] w x2 · C[0,5] w x3 · D[5,9] w x4")
	o := DefaultOptions()
	a, b, c, d := &h.Txns[0], &h.Txns[1], &h.Txns[2], &h.Txns[3]
	if o.Precedes(a, b) || o.Precedes(b, a) {
		t.Error("A and B coincide: concurrent")
	}
	if !o.Precedes(c, a) || !o.Precedes(a, d) || !o.Precedes(c, d) {
		t.Error("ties with e_i = s_j order i first")
	}
}

func TestStringValueIsJSON(t *testing.T) {
	for _, s := range []string{"a", "1", "", "q\"\\", "\x01\n\t", "é", "\xff"} {
		v := StringValue(s)
		var back string
		if err := json.Unmarshal([]byte(v), &back); err != nil {
			t.Fatalf("%q: %s is not JSON: %v", s, v, err)
		}
		want, _ := json.Marshal(s)
		if s != "\xff" && back != s {
			t.Errorf("%q round-trips to %q", s, back)
		}
		var wantS string
		json.Unmarshal(want, &wantS)
		if back != wantS {
			t.Errorf("%q: decodes to %q, encoding/json to %q", s, back, wantS)
		}
	}
	if StringValue("1") == IntValue(1) {
		t.Error(`"1" and 1 must differ`)
	}
}

func TestStringValueRepairsInvalidUTF8AsTheCharacter(t *testing.T) {
	if StringValue("a\xffb") != StringValue("a\uFFFDb") {
		t.Errorf("%s != %s: one string, two texts", StringValue("a\xffb"), StringValue("a\uFFFDb"))
	}
}

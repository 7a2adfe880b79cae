package window

import (
	"fmt"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// FuzzModel decodes bytes into a configuration and a script of Add,
// Release, PopClosed, MarkIdle and Close calls, and checks the window
// against the naive model after every call, as TestModel does. Run it
// briefly: go test -fuzz FuzzModel -fuzztime 20s ./window/
func FuzzModel(f *testing.F) {
	f.Add([]byte("\x02\x10\x01\x01\x05" + "\x00\x00\x10\x05" + "\x01\x01\x40\x10" + "\x0c\x00\x00\x00" + "\x02\x00\x05\x03" + "\x0d\x00\x00\x00"))
	f.Add([]byte("\x03\x05\x00\x02\x03" + "\x00\x00\x20\x05" + "\x0e\x01\x00\x00" + "\x00\x02\x80\x05" + "\x0f\x00\x00\x00" + "\x00\x01\x90\x05"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 5 {
			return
		}
		cfg := Config{
			Partitions: 1 + int(data[0]%4),
			Lateness:   int64(data[1] % 64),
			Skew:       int64(data[2] % 4),
			InDoubt:    []int64{history.NoInDoubt, 0, 7}[data[3]%3],
		}
		if data[4]%2 == 1 {
			cfg.IdleTimeout = 1 + int64(data[4]/2)
		}
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := newModel(cfg)
		for i := 5; i+4 <= len(data) && i < 5+4*300; i += 4 {
			b := data[i : i+4]
			p := int(b[1]) % cfg.Partitions
			switch op := b[0] % 16; {
			case op < 12:
				x := history.Txn{ID: fmt.Sprintf("t%d", b[1]/4), HasTime: true, Start: int64(b[2]), Status: history.Status(op % 3)}
				x.End = x.Start + int64(b[3]%32)
				switch b[3] {
				case 255:
					x.HasTime, x.Start, x.End = false, 0, 0
				case 254:
					x.End = x.Start - 1
				}
				got, want := w.Add(p, x), m.add(p, x)
				if !sameDead(got, want) {
					t.Fatalf("Add(%d, %s) = %v, model %v", p, x.Compact(), got, want)
				}
			case op == 12:
				if got, want := w.Release(nil), m.release(t); !slices.Equal(ids(got), ids(want)) {
					t.Fatalf("release %v, model %v", ids(got), ids(want))
				}
			case op == 13:
				if got, want := w.PopClosed(nil), m.popClosed(); !slices.Equal(got, want) {
					t.Fatalf("closed %v, model %v", got, want)
				}
			case op == 14:
				w.MarkIdle(p)
				m.markIdle(p)
			default:
				w.Close()
				m.closed = true
			}
			m.check(t, w)
		}
	})
}

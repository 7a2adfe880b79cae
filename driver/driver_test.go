package driver

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/window"
)

// TestTickAbove: the tick above x is the smallest multiple of the tick
// strictly greater than x, for negative x and at both ends of int64
// (a partition without a watermark keys its dead letters at MinInt64).
func TestTickAbove(t *testing.T) {
	for _, tick := range []int64{1, 7, 100_000_000} {
		d := &Driver{cfg: Config{Tick: tick}}
		for _, x := range []int64{math.MinInt64, math.MinInt64 + 1, math.MinInt64 + tick, -tick - 1, -tick, -1, 0, 1, tick - 1, tick, 1 << 40, math.MaxInt64 - tick - 1} {
			got := d.TickAbove(x)
			// got-tick may not be representable: then got is the lowest tick.
			if got <= x || got%tick != 0 || got >= math.MinInt64+tick && got-tick > x {
				t.Errorf("tick %d: TickAbove(%d) = %d", tick, x, got)
			}
		}
		if got := d.TickAbove(math.MaxInt64); got != math.MaxInt64 {
			t.Errorf("tick %d: TickAbove(MaxInt64) = %d, want MaxInt64 (none)", tick, got)
		}
	}
}

// TestDataDriven runs the scripts in testdata/, which read like the
// histories of docs/SEMANTICS.md §5. Commands:
//
//	new [partitions=P] [tick=T] [lateness=L] [skew=Δ] [indoubt=D|none]
//	    [initial=empty|unknown] [evict]
//	txn partition=N     one transaction per line in the compact notation
//	                    (history.ParseCompact); each line's offset is the
//	                    partition's next; prints accepted or why it was set
//	                    aside, then W
//	dead-letter partition=N reason=R
//	                    an event the caller could not accept, with what was
//	                    recovered of it (a compact transaction, or nothing)
//	watermark           W
//	tick                every step due: what it gave the engine, its alerts
//	idle                RaiseIdle (the caller's clock said: quiet), then tick
//	end                 EndInput, tick, and the final step
//
// Regenerate the expected text with -rewrite.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var s script
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return s.run(t, d)
		})
	})
}

type script struct {
	d    *Driver
	offs []int64
}

func arg(d *datadriven.TestData, key string) (string, bool) {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return "", true
			}
			return a.Vals[0], true
		}
	}
	return "", false
}

func argInt(t *testing.T, d *datadriven.TestData, key string, def int64) int64 {
	v, ok := arg(d, key)
	if !ok {
		return def
	}
	if v == "none" {
		return history.NoInDoubt
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		d.Fatalf(t, "%s: %v", key, err)
	}
	return n
}

func parseTxns(t *testing.T, d *datadriven.TestData) []history.Txn {
	h, err := history.ParseCompact(d.Input)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	for i := range h.Txns {
		h.Txns[i].Pos = history.Pos{}
	}
	return h.Txns
}

func (s *script) run(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && s.d == nil {
		d.Fatalf(t, "no driver: start with new")
	}
	var b strings.Builder
	switch d.Cmd {
	case "new":
		parts := int(argInt(t, d, "partitions", 1))
		cfg := Config{Tick: argInt(t, d, "tick", 10), Skew: argInt(t, d, "skew", 0), Lateness: argInt(t, d, "lateness", 0)}
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.Skew = cfg.Skew
		opts.InDoubt = argInt(t, d, "indoubt", history.NoInDoubt)
		if v, ok := arg(d, "initial"); ok {
			var err error
			if opts.InitialState, err = history.ParseInitialState(v); err != nil {
				d.Fatalf(t, "%v", err)
			}
		}
		win, err := window.New(window.Config{Partitions: parts, Lateness: cfg.Lateness, Skew: cfg.Skew, InDoubt: opts.InDoubt})
		if err != nil {
			return err.Error()
		}
		_, evict := arg(d, "evict")
		eng := online.NewOnlineConfig(opts, online.OnlineConfig{Evict: evict})
		s.d = New(cfg, win, eng, NewState(parts))
		s.offs = make([]int64, parts)
		return fmt.Sprintf("W=%s", fmtTime(s.d.Watermark()))
	case "txn":
		p := int(argInt(t, d, "partition", 0))
		for _, x := range parseTxns(t, d) {
			off := s.offs[p]
			s.offs[p]++
			switch rej := s.d.Accept(p, off, x, 0); {
			case rej == nil:
				fmt.Fprintf(&b, "%s: accepted\n", x.ID)
			case rej.Clash != nil:
				fmt.Fprintf(&b, "%s: invalid: %v\n", x.ID, rej.Clash)
			default:
				fmt.Fprintf(&b, "%s: %s: %s\n", x.ID, rej.Window.Reason, rej.Window.Detail)
			}
		}
		fmt.Fprintf(&b, "W=%s", fmtTime(s.d.Watermark()))
		return b.String()
	case "dead-letter":
		p := int(argInt(t, d, "partition", 0))
		reason, _ := arg(d, "reason")
		off := s.offs[p]
		s.offs[p]++
		txns := parseTxns(t, d)
		switch len(txns) {
		case 0:
			s.d.SetAside(p, off, nil)
			fmt.Fprintf(&b, "offset %d: %s, nothing recovered\n", off, reason)
		case 1:
			s.d.SetAside(p, off, &txns[0])
			fmt.Fprintf(&b, "offset %d: %s, recovered %s\n", off, reason, txns[0].Compact())
		default:
			d.Fatalf(t, "dead-letter: at most one recovered transaction")
		}
		fmt.Fprintf(&b, "unchecked %s", s.unchecked())
		return b.String()
	case "watermark":
		return fmt.Sprintf("W=%s", fmtTime(s.d.Watermark()))
	case "tick":
		s.drain(t, &b)
	case "idle":
		w, ok := s.d.RaiseIdle()
		if !ok {
			b.WriteString("W stays\n")
		} else {
			fmt.Fprintf(&b, "W=%s\n", fmtTime(w))
		}
		s.drain(t, &b)
	case "end":
		s.d.EndInput()
		s.drain(t, &b)
		rd, err := s.d.Final(context.Background())
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		printReady(&b, &rd)
		es := s.d.Engine().(*online.Online).Stats()
		fmt.Fprintf(&b, "checked %d, %d alerts\n", es.Released, es.Alerts)
	default:
		d.Fatalf(t, "unknown command %s", d.Cmd)
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if out == "" {
		out = "nothing due"
	}
	return out
}

func (s *script) drain(t *testing.T, b *strings.Builder) {
	n := 0
	for s.d.HasReady() {
		rd, err := s.d.Ready(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		printReady(b, &rd)
		n++
	}
	if n == 0 {
		fmt.Fprintf(b, "nothing due at W=%s\n", fmtTime(s.d.Watermark()))
	}
}

func (s *script) unchecked() string {
	var us []string
	for _, u := range s.d.State().Unchecked {
		us = append(us, fmt.Sprintf("%s@%s", u.Txn.ID, fmtTime(u.Key)))
	}
	if len(us) == 0 {
		return "none"
	}
	return strings.Join(us, " ")
}

// printReady prints one step: what it gave the engine, in D1's order,
// and its alerts.
func printReady(b *strings.Builder, rd *Ready) {
	fmt.Fprintf(b, "step %s:", fmtTime(rd.Tick))
	if len(rd.Unchecked) > 0 {
		b.WriteString(" unchecked")
		for _, u := range rd.Unchecked {
			b.WriteString(" " + u.Txn.ID)
		}
		b.WriteString(";")
	}
	if len(rd.Released) > 0 {
		b.WriteString(" released")
		for _, x := range rd.Released {
			b.WriteString(" " + x.ID)
		}
		b.WriteString(";")
	}
	if len(rd.Closed) > 0 {
		b.WriteString(" closed")
		for _, c := range rd.Closed {
			b.WriteString(" " + c.ID)
		}
		b.WriteString(";")
	}
	b.WriteString("\n")
	for _, a := range rd.Alerts {
		upd := ""
		if a.Updated {
			upd = " (updated)"
		}
		fmt.Fprintf(b, "  alert %s %s core {%s}%s\n", a.ID, a.Type, strings.Join(a.Core, ","), upd)
	}
}

func fmtTime(x int64) string {
	switch x {
	case math.MinInt64:
		return "-inf"
	case math.MaxInt64:
		return "+inf"
	}
	return strconv.FormatInt(x, 10)
}

package cliutil

import "testing"

// TestExitCodePrecedence enumerates every combination of the outcome's
// parts and holds ExitCode to the documented precedence, written out
// independently: 2 (input error, or nothing checked) > 1 (anomaly) >
// 3 (unknown or partial) > 0.
func TestExitCodePrecedence(t *testing.T) {
	for _, inputErrors := range []uint64{0, 1, 7} {
		for _, txns := range []uint64{0, 1, 100} {
			for _, anomalies := range []uint64{0, 1, 3} {
				for _, partial := range []bool{false, true} {
					o := Outcome{InputErrors: inputErrors, Transactions: txns, Anomalies: anomalies, Partial: partial}
					want := 0
					if partial {
						want = 3
					}
					if anomalies > 0 {
						want = 1
					}
					if inputErrors > 0 || txns == 0 {
						want = 2
					}
					if got := o.ExitCode(); got != want {
						t.Errorf("%+v: exit %d, want %d", o, got, want)
					}
				}
			}
		}
	}
}

// An empty input is not valid, whatever else is said of it.
func TestExitCodeNoTransactions(t *testing.T) {
	if got := (Outcome{}).ExitCode(); got != ExitInput {
		t.Fatalf("empty outcome: exit %d, want %d", got, ExitInput)
	}
}

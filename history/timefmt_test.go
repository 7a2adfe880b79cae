package history

import "testing"

func TestFormatTime(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		want string
	}{
		{1700000000013317265, "2023-11-14T22:13:20.013317265Z"},
		{1700000000000000000, "2023-11-14T22:13:20.000000000Z"},
		{110, "110"},
		{12345678901, "12345678901"}, // Jepsen: ns since the test began
		{-5, "-5"},
	} {
		if got := FormatTime(tc.ns); got != tc.want {
			t.Errorf("FormatTime(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
	for _, tc := range []struct {
		ns   int64
		want string
	}{{1000000, "1ms"}, {0, "0s"}, {1500, "1.5µs"}, {98000000, "98ms"}} {
		if got := FormatDuration(tc.ns); got != tc.want {
			t.Errorf("FormatDuration(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
	for _, tc := range []struct {
		s, e int64
		want string
	}{
		{1700000000013317265, 1700000000014317265, "[2023-11-14T22:13:20.013317265Z, +1ms]"},
		{110, 200, "[110,200]"},
		{1700000000013317265, 1700000000013317264, "[1700000000013317265,1700000000013317264]"},
	} {
		if got := FormatInterval(tc.s, tc.e); got != tc.want {
			t.Errorf("FormatInterval(%d, %d) = %q, want %q", tc.s, tc.e, got, tc.want)
		}
	}
}

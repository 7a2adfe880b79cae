package history

import "testing"

// BenchmarkLevelQuestions measures the questions the checkers ask a level
// in their per-pair loops (incremental/prep.go asks both for every pair it
// orders): RealTime and SessionOrder, over every checked level.
//
//	go test ./history -run '^$' -bench LevelQuestions -count 10
func BenchmarkLevelQuestions(b *testing.B) {
	lvs := []Level{Serializable, StrongSessionSerializable, StrictSerializable}
	n := 0
	for b.Loop() {
		for _, l := range lvs {
			if l.RealTime() {
				n++
			}
			if l.SessionOrder() {
				n++
			}
		}
	}
	if n == 0 {
		b.Fatal("no level orders anything")
	}
}

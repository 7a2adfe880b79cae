package online

// skeletonFree: u, an unknown before t, needs no skeleton of t: it is
// time-closed and r5Remove keeps the orders through t out of it
// (rules29_through.go).
func (s *evictStep) skeletonFree(u, t int32) bool {
	return s.closedOpenUnknown(u) // rules29_through.go
}

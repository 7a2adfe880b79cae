package online

// A step with nothing new is not checked again (docs/SEMANTICS.md §5, "A
// step with nothing new is not checked").
//
// quiet is set by a step whose reduced instance was satisfiable at its
// first solve (not held for an unknown's reads, evict_unknown.go), that
// finished its eviction and left no pending alert; and cleared by
// everything given to the engine since: a release, a closing that closes
// something, an unchecked writer, a new retention bound. While it holds,
// the released history and what is closed of it are those the last step
// judged consistent, so the next instance, however the eviction reduced
// it, is satisfiable too (the eviction is exact: an unsatisfiable one
// would be an alarm on a history found consistent), and the step has
// nothing to alert. What it skips is only more eviction, which the next
// step that has something to check does. At the end of standard input
// `run` steps once more after its last closing (driver.Final), with
// nothing new: on a burst inside one tick that step encoded and solved
// the whole window a third time (issue 20, item 7).

// noQuiet turns the rule off (tests: the differential of
// burst_quiet_test.go runs with and without it).
var noQuiet bool

// quietSteps counts the steps the rule skipped (tests).
var quietSteps int

// quietStep reports whether this step has nothing to check; otherwise it
// clears quiet, which the step sets again if it ends satisfiable.
func (o *Online) quietStep() bool {
	if o.quiet && o.evicting && len(o.pending) == 0 && !noQuiet {
		quietSteps++
		return true
	}
	o.quiet = false
	return false
}

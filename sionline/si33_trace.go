package sionline

// traceScreen, nil but in tests, is called at each screen a step checks
// (readmit: one after a re-admission of readmitFrom), with "sweep" and whether the serial sweep ordered it, then, when the
// search decides it, with "search" and whether it was valid; n is the
// screen's size. It changes nothing the engine decides.
var traceScreen func(readmit bool, how string, ok bool, n int)

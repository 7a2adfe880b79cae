package sionline

import "github.com/streamcheck/streamcheck/history"

// Where re-admissions come from (si32): two hooks, nil but in tests,
// that say why an in-doubt writer's version was missing from the ghost
// when a read named its segment. They change nothing the engine decides.
//
// traceCompanion is called when an archived chunk leaves: with "dropped
// (K7)" and a held companion's writes when K7 drops it, with "refused:
// WHY" and a candidate's ops when it does not become a companion (WHY
// the condition of newCompanion, or K5's shared keys).
var traceCompanion func(event string, ops []history.Op)

// traceNamed is called by diagnose for each version a read of the
// screen names (no transaction of the screen, the ghost or its
// companions wrote it).
var traceNamed func(k history.Key, v history.Value)

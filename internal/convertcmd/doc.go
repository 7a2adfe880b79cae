// Package convertcmd implements `streamcheck convert`: it reads a history
// in any format ingest reads (native, Elle EDN/JSON, Cobra logs, dbcop
// bincode, the PolySI/Plume text format, AWDIT's test format, Viper's JSON
// logs) and writes
// it as native JSON Lines, Elle EDN, dbcop bincode or the text format, so
// that the peers' checkers and streamcheck can run side by side on the
// same recording.
//
// A target that cannot say something of the history (lists, non-integer
// values, unknown outcomes and the value 0 in dbcop and text; overlapping
// transactions of one session in Elle EDN) is an error naming the
// transaction and the operation; nothing is written then, never a part of
// the history. What a target leaves out or renames by design (ids and
// session names in dbcop, timestamps in dbcop and text, keys that are not
// non-negative integers) is listed in ingest's doc.go,
// "Peer formats".
package convertcmd

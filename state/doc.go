// Package state owns streamcheck's durable state on Pebble: the checkpoint
// of `streamcheck run` (per-partition offsets, the engine and window
// snapshots, the run's own counters), the ids of alerts already emitted,
// the alert outbox, and the bodies of evicted transactions under a
// retention bound. Its key layout and format version are drawn in
// FORMAT.md. It knows nothing of Kafka, the window or the engine: their
// state reaches it as opaque bytes.
//
// Invariants:
//
//	S1 A checkpoint is one atomic, synced Pebble batch (Save): after a power
//	   loss at any moment, Load returns either the last checkpoint whose
//	   Save returned or a later one whose batch reached the disk, never a
//	   mix of two.
//	S2 The format version key is written by the first Open of an empty
//	   directory, in the same synced batch as nothing else; Open refuses a
//	   directory whose version is unknown or newer (ErrFormat) and one that
//	   holds Pebble data without a version (not ours).
//	S3 One process at a time: Open takes Pebble's exclusive lock on the
//	   directory, and a second Open fails with ErrLocked.
//	S4 Outbox writes (Put, Done) are synced on their own, so an alert that
//	   was handed to a sink is never forgotten by a crash before the next
//	   checkpoint; Pending lists what some sink has not acknowledged.
//	S5 Evicted bodies are kept while they are within the retention bound
//	   (event-time age and total bytes); Body of one past it says so
//	   (ErrBodyGone), naming the body.
//	S6 The engine's body file (BodyFile) lies in the locked directory; the
//	   run syncs it before the Save whose engine snapshot counts its
//	   length, and a restore cuts it back to that length, so a crash
//	   between the two leaves the previous checkpoint whole.
//	S7 Retention frees the body file's bytes before the engine's cut
//	   only after a Save whose snapshot names nothing before it is
//	   durable, so the previous checkpoint's records are never freed
//	   while a crash could still restore it.
//	S8 Damage is reported, never panicked on nor read past: a Pebble file
//	   that fails its checksum (found in a read or in the background)
//	   makes every operation return a *CorruptError naming it (ErrCorrupt);
//	   the body file's records carry a CRC-32C each (format 4), which the
//	   engine checks on every read (online.ErrCorrupt). A version 2 or
//	   3 directory is marked 4 when opened, so an older binary refuses it.
//
// Concurrency: a Store is safe for use by one goroutine that checkpoints
// and others that use the outbox (Pebble is); Save calls must not overlap.
//
// Cost: Save writes O(partitions + snapshot bytes + new bodies) and
// deletes bodies past retention in time order, O(bodies deleted).
package state

// Package ingest turns recorded or streamed transaction histories into
// streamcheck's data model (package history). It reads three formats:
//
//   - native JSON Lines, one finished transaction per line; the same bytes
//     are one Kafka message later (NativeDecoder, AppendNative);
//   - Jepsen/Elle histories in EDN (olympos.io/encoding/edn);
//   - Jepsen/Elle histories in JSON (as elle-cli and converters write them);
//
// and the formats of the peers' checkers ("Peer formats" below): Cobra's
// binary client logs, dbcop's bincode, the PolySI/Plume/IsoVista text
// format, AWDIT's test format and Viper's JSON logs. AppendNativeHistory, AppendElleEDN,
// AppendDBCop and AppendText write a history back (`streamcheck convert`).
//
// ReadHistory and ReadFile read a whole history in any of them, detecting
// the format and gzip compression from content, and return the whole
// history, validated, or an error and nothing (never a prefix). The Kafka
// source will live here too; this package does IO, the checkers do not.
// ScanNative reads a plain native file line by line without holding it,
// each key and value text numbered once as it is decoded (Event), for
// check's compact path with database stamps (stampcheck.Compact); it does
// not validate the whole history, its caller does.
//
// # Model and canonical text
//
// Every key and value becomes a history.Value, canonical text that is the
// same whichever format spelled the datum (docs/SEMANTICS.md §1 last bullet):
//
//	integer            its decimal text, exactly as int64 (1763719200123456789
//	                   stays exact; out of range is an error, never rounded)
//	other number       its literal text: 1.0 stays "1.0", 1e5 stays "1e5";
//	                   1, 1.0 and "1" are three distinct values
//	string             history.StringValue: JSON-quoted, escapes normalised
//	                   ("\u0041" and "A" are one value); bytes that are
//	                   not UTF-8 and unpaired surrogate escapes (\ud800)
//	                   are an error naming the field, never U+FFFD as in
//	                   encoding/json: a replacement would make distinct
//	                   strings one key or value (JSON text must be UTF-8)
//	true, false        themselves
//	null / nil         history.Null
//	EDN keyword :k     the string ":k" (history.StringValue(":k")), distinct
//	                   from the string "k"; keywords are how Clojure tests
//	                   spell keys, so they must not be rejected, and a JSON
//	                   export of the same history spells them ":k"
//	EDN 7N             7 (Clojure's = treats 7N and 7 as equal)
//	EDN +1, +1.5       1, 1.5 (the JSON spelling)
//
// Rejected as values: EDN decimals (1.5M: no exact JSON spelling and unequal
// to 1.5 in Clojure), characters, symbols, floats with no JSON spelling
// (1.), nested collections. Keys must be integers or strings (keywords in
// EDN): a float key is almost certainly a bug in the recorder, and
// booleans/null keys make no sense. A write or append of null is rejected:
// null means "absent" and the model has no delete.
//
// # Native format
//
//	{"session":"c7","id":"c7-42","start":1763719200123456789,
//	 "end":1763719200125000000,"status":"committed",
//	 "ops":[["r","x",3],["w","x",4],["append","l",17],["r","l",[3,17]]]}
//
// Decisions (the spec in issue #4 left them open):
//
//  1. status is required (committed | aborted | unknown). A default of
//     committed would turn a recorder that forgot the outcome of a failed
//     commit into false alarms; an explicit field costs a few bytes.
//  2. ops is required (it may be []).
//  3. session and id are strings (non-empty) or integers (int64, decimal
//     text); null means absent. Session 1 and session "1" are the same
//     session "1"; likewise ids.
//  4. A missing id defaults to "<session>-<line>" or "<line>" (the Kafka
//     offset when there is no line), so Decode stays stateless; an explicit
//     id that collides with a default is a duplicate-id error.
//  5. start and end are int64 integers (a float such as 1.7e18 is an error:
//     it cannot carry nanoseconds), both or neither, end >= start.
//  6. A read's value is a scalar or null (register) or an array of non-null
//     scalars (a list read; IsList). [] is the empty list, null on a list
//     key is Null with IsList false, which the checker reads as empty.
//  7. Unknown top-level fields are skipped, for forward compatibility, but
//     must be well-formed JSON. A known field given twice is an error
//     (encoding/json would silently keep the last).
//  8. Field names are case-sensitive (unlike encoding/json's struct
//     matching): "Status" is an unknown field.
//  9. Exactly one JSON object per line; blank lines are skipped.
//
// # Elle pairing
//
// Jepsen operations are maps with :type (:invoke :ok :fail :info),
// :process, :time (ns), :f, :value and :index, one per line or inside one
// vector/array. Rules:
//
//  1. Operations of process :nemesis are ignored, as are operations whose
//     :f is not :txn; both are counted (Stats). A missing :f counts as :txn
//     (Elle's own example histories leave it out), as does a missing
//     :process (pairing is then in input order, without sessions).
//  2. If the history has at least one :txn invocation, invocations and
//     completions pair by process: process = session, invocation time =
//     start, completion time = end, and the completion's :value holds the
//     reads. :ok = committed, :fail = aborted, :info = unknown. A process
//     that invokes while its previous invocation is open, or a completion
//     with no open invocation, is an error. After an :info the process may
//     invoke again (the :info transaction stays unknown).
//  3. An invocation never completed is unknown; its end is the history's
//     last time (the latest instant its outcome was still unknown; the
//     checker uses +∞ for unknown ends unless given an in-doubt horizon).
//  4. A history with no invocation at all is completions-only (many
//     published corpora): each completion is a transaction, without
//     timestamps (a completion time alone is not an interval).
//  5. In a transaction not known to have committed (:fail, :info,
//     unfinished) a read of nil is dropped: Jepsen copies the invocation's
//     [:r k nil], which means "not observed", not "absent". Reads that did
//     return something are kept.
//  6. An :ok completion must report the micro-ops its invocation submitted
//     (same functions and keys in order, same written values), or the
//     history is rejected: a mis-pairing would otherwise surface as a
//     baffling anomaly.
//  7. Ids are the invocation's :index (the completion's in completions-only
//     histories) when every :txn operation has one, else the operation's
//     1-based position in the input.
//  8. A completion time before its invocation time is an error.
//  9. A record tag (#jepsen.history.Op{...}) is read as a map; EDN maps with
//     duplicate keys are rejected (Clojure's reader does the same). Fields
//     other than :type :f :process :time :index :value are skipped and need
//     only be balanced forms (in JSON: well-formed JSON).
//  10. In JSON, keys and keyword-like strings may keep Clojure's colon
//     (":type", ":invoke", ":txn", ":r", ":nemesis"), as some converters
//     write them; keyword values are strings either way (":k").
//  11. A transaction's Pos is its completion's (where its reads are), or its
//     invocation's when it has none.
//
// # Peer formats
//
// Each decoder follows its writer's source (the files are named in each
// decoder's comment); none is guessed. What each can say, and how it maps
// onto the model:
//
//	            keys, values        sessions, ids           time  outcomes
//	Cobra       int64 key hashes;   file T<n>.log = session  no    committed only
//	(cobra.go)  write ids as values "T<n>"; txn id as id
//	dbcop       unsigned integers   numbered 1..; ids        no    committed, aborted
//	(dbcop.go)                      "<session>-<position>"
//	text        unsigned integers   as written (decimal)     no    committed; txn -1
//	(plaintext.go)                                                 writes aborted
//	AWDIT test  unsigned integers   numbered 0..; ids        no    committed only
//	(awdit.go)                      "<session>-<position>"
//	Viper JSON  integers, strings   file J<n>.log = session  no    committed only
//	(viper.go)                      "J<n>"; ids "J<n>-<line>"
//
// Rules:
//
//  1. Cobra: a write's value is its write id (Cobra makes write ids unique;
//     the logged value hash is not unique and is not used). A read names
//     the write it saw and that write's transaction: its value is the write
//     id, and a read whose named transaction is not the one that logged
//     that write id is an error; a read of Cobra's init or null pseudo
//     write (0xbebeebee, 0xdeadbeef) is the model's initial state, null.
//     A directory is read as Cobra logs: every *.log file, one session
//     each, in natural name order. A log with Cobra's optional timestamps
//     (TIME_ORDER_ON) is rejected at its first record; so are abort
//     records, garbage-collection reads and a transaction with no commit.
//     A read that names its own transaction is read as written (Cobra's
//     verifier asserts against it; here it is the database's anomaly, a
//     future or internal read, for the checker to report). Because
//     Cobra's verifier rejects such reads, logs written for it carry no
//     read of a transaction's own write, and Plume's Cobra form of its
//     internal-read case leaves the read out (docs/SEMANTICS.md §9,
//     "Plume's test cases").
//  2. dbcop and text: every key holds 0 before its first write (dbcop's
//     generator writes values from 1). A read of 0 is the initial state
//     (null); a committed transaction that writes only 0s is that initial
//     state written out by a converter (AWDIT, PolySI and IsoVista write
//     one) and is set aside (Stats.SetAside); any other write of 0 is an
//     error. dbcop events with success false did not run and are set
//     aside; a transaction with success false is aborted.
//  3. text: a transaction is all lines with its txn number, in the session
//     of its first line; transactions of a session are in order of first
//     appearance. Writes with txn -1 (IsoVista, AWDIT) are aborted writes,
//     gathered into one aborted transaction "aborted-<session>" without a
//     session; reads with txn -1 are set aside.
//  4. AWDIT's test format has no implicit initial value: its tests write
//     the initial values in a session of their own, so 0 is the integer 0.
//  5. Viper: a directory of J* files (or one such file, detected by its
//     first object's "value" key), one transaction a line; "nil" reads
//     are null; writes with succ false are set aside; Viper's range,
//     insert and delete operations and an initial-state transaction
//     (isInitial) are errors: the model cannot say them. A directory
//     whose J* files are all empty (and that has no other *.log) is
//     Viper's too, and an error saying its logs are empty.
//  6. None of them has timestamps or unknown outcomes: the real-time levels
//     cannot be checked on them, and writing a history with unknown
//     outcomes to dbcop or text is refused.
//  7. Writers write what the readers read back as the same history where
//     the target can say it (round trips in peers_test.go): dbcop keeps
//     outcomes, operations and session order, not ids, session names or
//     times; text keeps integer ids and sessions (else numbers them) and
//     aborted writes, not aborted reads or times; Elle EDN keeps
//     everything but non-integer ids (and, by Elle's rule 5, nil reads of
//     transactions not known to have committed). dbcop and text keep keys
//     when all are non-negative integers, else number them 1, 2, ... in
//     order of first appearance (keys are names: a bijective renaming
//     changes no verdict; Cobra's key hashes are signed). What a target
//     cannot say (lists and non-integer values in dbcop and text, the value
//     0 there, overlapping transactions of one session in Elle) is an
//     error naming the transaction, never a silently different history.
//
// # Format detection
//
// From the first non-space byte (after a UTF-8 BOM and gzip magic): `{:` is
// EDN; `{"` is native if the first object has an "ops" key, Elle JSON if it
// has "type" (and no "ops"), else an error; `[` followed by `{"`, `{}` or
// `]` is Elle JSON, any other `[` EDN; `;`, `#` and `(` are EDN. Empty input
// is an empty native history. Before those, the peers' formats, which none
// of them can start with: dbcop when the first bytes parse as its header
// (five integers, an info string, a start time beginning with a year);
// Cobra when the first byte is 'S' (one log, one session); the text format
// when the first non-space bytes are `r(` or `w(`; AWDIT's when they are
// `r ` or `w ` or a separator line (`=`, `--`); Viper when a first object
// `{"...` has a "value" key and neither "ops" nor "type". ReadFile reads a
// directory as dbcop's when it holds history.bincode, as Viper's when its
// first J* file starts with '{', else as Cobra logs.
//
// # Invariants
//
//  1. Decoding never panics and never returns part of a history: errors are
//     *history.Error naming the source, the line and, where there is one,
//     the field (ops[2], :value[0]); native errors also carry the byte
//     column in the message and in Pos.Offset.
//  2. Integers are never routed through float64.
//  3. For every accepted Txn t, Decode(AppendNative(t)) == t apart from Pos.
//  4. The same history in native, Elle EDN and Elle JSON decodes to the same
//     transactions (ids and timestamps where the format has them).
//  5. NativeDecoder and an independent encoding/json implementation of the
//     native rules accept the same lines and produce the same Txn
//     (oracle_test.go; fuzzed).
//  6. Every peer decoder returns a whole history or a *history.Error
//     naming the file, the byte offset (binary formats) or line (text
//     formats) and the field (fuzzed: FuzzCobra, FuzzDBCop, FuzzText,
//     FuzzAWDIT, FuzzViper). Each reads back generated histories written
//     in its format: by convert's writers (peers_test.go) or, for the
//     formats convert does not write, by encoders in the tests that share
//     no code with the decoders (peers_roundtrip_test.go). A length read from a binary header is bounded by the
//     bytes left before anything is allocated for it.
//
// # Why a hand-written scanner
//
// The brief prefers libraries. The native event has a fixed shape whose
// values must become canonical text with exact integers; a library decodes
// into a generic tree (json.RawMessage, json.Number) that is then walked
// and copied again. Measured side by side on the same realistic events
// (197 bytes, 4.5 micro-ops), one goroutine, CPU time per event
// (cpu-ns/op, which a shared machine does not inflate as it does wall
// time; the machine had a load of 12 on 2 cores, so absolute numbers are
// pessimistic; bench_test.go; the library variants validate less):
//
//	NativeDecoder (this package)          1.4-1.8 µs/txn     3 allocs
//	goccy/go-json into a typed struct     4.9-6.3 µs/txn    49 allocs
//	encoding/json into a typed struct    10.3-11.2 µs/txn   70 allocs
//
// At 100K txn/s the whole budget is 10 µs per transaction, so the library
// path alone would spend half of it or more. The scanner is checked
// against encoding/json by a differential fuzz target and a mutation test
// (invariant 5). Elle JSON reuses the scanner (about 7 µs of CPU per
// transaction, two operations each). EDN uses the library, the slow path
// (about 22 µs per transaction: it lexes rune by rune into buffers; Jepsen
// histories are offline and smaller): one library call per completion's
// :value; the form splitter finds forms, keys and scalars, and reads an
// invocation's :value for the shape check, so the library reads an
// invocation only when its transaction has no completion value.
//
// # The fast path
//
// Most native lines have one spelling: no whitespace, printable-ASCII
// strings without escapes, canonical non-negative integers, only the
// known fields (what recorders and `streamcheck gen` write). decodeFast
// reads that spelling in one pass, without the scanner's per-token
// whitespace, escape, UTF-8 and error bookkeeping, and declines any other
// line before it reports anything; decodeSlow (the general decoder above)
// then reads the declined line from its start and decides it. So every
// error is the general decoder's, and on the lines it accepts the fast
// path must give the same Txn, facts and scan ids (docs/SEMANTICS.md §10
// "The native decoder's fast path"; native_fast_test.go holds the two
// to it on the corpus, generated and mutated lines, and by fuzzing).
// Measured per line of gen's stamped histories (BenchmarkNativeDecodeModes,
// CPU time, load 3 on 2 cores): ScanNative's mode 0.85-0.97 µs against
// the general decoder's 2.0-2.1 (mixed) and 0.68-0.72 against 1.8-2.4
// (blind writes); Decode's 2.0-2.4 against 3.8-4.2 and 1.0-1.3 against
// 2.4-2.8 (BENCHMARKS.md "decode29").
//
// # Complexity
//
// Native: O(n) in the line length; one allocation for the ops slice, one
// per list read and one per value, except keys, sessions and values of up
// to 16 bytes, which are interned in a table bounded at 64K entries
// (cleared when full, so ever-new UUID keys cannot grow it).
// Elle: O(n) to split forms and pair (a map of open invocations per
// process). EDN: each :value is read by the library once (O(n)); a
// transaction holding a float is read a second time, token by token, to
// keep the float's literal text.
//
// References: docs/SEMANTICS.md §1 (exact integers, distinct spellings), §2
// (unknown outcomes), docs/SEMANTICS.md §0 and the decoding
// measurement; Jepsen's history format (jepsen.history README) and Elle's
// list-append and rw-register histories (jepsen-io/elle); the peers'
// readers and writers: DBCobra/CobraVerifier AbstractVerifier.java,
// amnore/dbcop src/db/history.rs, amnore/PolySI history/loaders,
// hengxin/IsoVista history/loader and ViperHistorySerializer,
// lassemoldrup/AWDIT src/formats.rs, Khoury-srg/Viper src/utils.
package ingest

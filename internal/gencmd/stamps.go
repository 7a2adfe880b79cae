package gencmd

import (
	"bufio"
	"io"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// writeStamps is write with the simulated store's stamps on each line
// (gen.GenerateStampsStream): the same transactions, so a benchmark can
// check one history with and without the database's facts.
func writeStamps(cfg gen.Config, out io.Writer) ([]gen.Injected, error) {
	w := bufio.NewWriterSize(out, 1<<20)
	var line []byte
	inj, err := gen.GenerateStampsStream(cfg, func(t *history.Txn, f history.Facts) error {
		line = ingest.AppendNativeFacts(line[:0], t, &f)
		line = append(line, '\n')
		_, err := w.Write(line)
		return err
	})
	if err != nil {
		return nil, err
	}
	return inj, w.Flush()
}

package weakonline

// Every retirement pass of this package's tests finds the unsettled both
// ways, by scans (settleByScans, what runs) and by a map of every held
// read (settleByReaders, the reference), and panics where they differ.
func init() { settleCompare = true }

package stampcheck

// AheadSized is Compact.Ahead with batches of n transactions: the tests
// cross batch boundaries on small histories.
func AheadSized(c *Compact, n int) *Ahead { return c.ahead(n) }

package online

// The alerts an engine keeps (docs/SEMANTICS.md §5 "The alerts an engine
// keeps").
//
// Step returns every alert it raises or updates; the caller delivers
// it (run: the JSON lines, the sinks, the status page, each bounded on
// its side). The engine itself needs an alert after the step that
// raised it only while it is pending: O5 shrinks it again once its
// members close, and capPinned keeps its members. Keeping every alert
// made the engine's memory grow with the anomalies of the stream (an
// explanation, a cycle, the names of the core: about a kilobyte each,
// 12 MB of the 54 MB in use after the 223K-transaction storm of
// BENCHMARKS.md), and every checkpoint wrote all of them again. The
// engine keeps the pending alerts and the newest keptAlerts others;
// Stats counts every alert raised.
//
// What an alert that left the list was still used for: find resolves
// a name through the alerts' core names, newest first, then the
// released transactions in order. A name an alert that left gave is
// then resolved by the second way, which gives the transaction a bare
// ID names in an alert history (nameApart: the first released with
// it). Every caller that must resolve a name within one alert asks that
// alert (member, AlertTxn), which holds its own names; the pending ones
// are all kept.

// keptAlerts is how many alerts besides the pending ones the engine
// keeps for Alerts (a variable for the tests).
var keptAlerts = 1024

// raise records alert a as raised.
func (o *Online) raise(a *Alert) {
	o.alerts = append(o.alerts, a)
	o.alertCount++
}

// trimAlerts drops the alerts beyond the newest keptAlerts that are not
// pending, once there are twice as many (so that trimming costs O(1)
// per alert).
func (o *Online) trimAlerts() {
	if len(o.alerts) <= 2*keptAlerts {
		return
	}
	pending := make(map[*Alert]bool, len(o.pending))
	for _, a := range o.pending {
		pending[a] = true
	}
	cut := len(o.alerts) - keptAlerts
	out := o.alerts[:0]
	for k, a := range o.alerts {
		if k >= cut || pending[a] {
			out = append(out, a)
		}
	}
	clear(o.alerts[len(out):])
	o.alerts = out
}

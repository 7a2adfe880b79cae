package statuspage_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/internal/statuspage"
)

// runLoop stands for internal/runcmd's runner: it implements
// statuspage.StatusSource from its own counters.
type runLoop struct{ txns uint64 }

func (r *runLoop) Status() statuspage.Status {
	return statuspage.Status{Stream: "kafka:txns", Level: "serializable", Lateness: 10 * time.Second,
		Partitions: []statuspage.Partition{{Name: "0", Lag: time.Second}}, TxnsChecked: r.txns}
}

// Example shows how `streamcheck run` wires the alerting path: one
// registry for every metric, the sinks from the configuration, the
// dispatcher over the state directory's outbox, and the HTTP server,
// which is also a sink so that the page lists every alert.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	reg := prometheus.NewRegistry()
	m := alerts.NewMetrics(reg)
	m.AllowedLateness.Set((10 * time.Second).Seconds())

	loop := &runLoop{}
	page := statuspage.New(statuspage.Options{
		Gatherer: reg, Source: loop, Logger: log,
		Ready: func() error { return errors.New("catching up") },
	})
	am, _ := alerts.NewAlertmanager(alerts.AlertmanagerOptions{
		URL: "http://127.0.0.1:9093", Stream: "kafka:txns", StatusURL: "http://127.0.0.1:9479",
	})
	d, _ := alerts.NewDispatcher(alerts.DispatcherOptions{
		Sinks:   []alerts.Sink{alerts.NewJSONLines("stdout", os.Stdout), am, page},
		Outbox:  alerts.NewMemOutbox(), // state.Store when a state directory is set
		Metrics: m, Logger: log,
	})
	_ = d.Start(ctx) // re-delivers what the outbox still owes
	defer d.Close()
	go page.ListenAndServe(ctx, statuspage.DefaultAddr, nil)

	// Per checked batch, per alert:
	m.TxnsChecked.Add(100)
	_ = d.Enqueue(report.Alert{ID: "a1"}, time.Now()) // never waits for a sink
}

package statuspage

import "github.com/streamcheck/streamcheck/internal/alertfixture"

// lostUpdateAlert(t, id) is the checker's lost-update alert under id.
var lostUpdateAlert = alertfixture.LostUpdate

package dashboards

import (
	"bytes"
	_ "embed"
)

// grafanaLoad is the dashboard GrafanaLoad copies.
//
//go:embed grafana-load.json
var grafanaLoad []byte

// GrafanaLoad returns the Grafana dashboard (JSON model) over the metrics
// of tasksim load --prom, in a slice of the caller's own; its data source
// is the variable ${datasource}.
func GrafanaLoad() []byte { return bytes.Clone(grafanaLoad) }

// livePage is the page Live serves at /.
//
//go:embed live.html
var livePage []byte

package dashboards

import _ "embed"

// GrafanaLoad is the Grafana dashboard (JSON model) over the metrics of
// tasksim load --prom; its data source is the variable ${datasource}.
//
//go:embed grafana-load.json
var GrafanaLoad []byte

// livePage is the page Live serves at /.
//
//go:embed live.html
var livePage []byte

// Package dashboards holds tasksim's dashboards next to the metric names
// they use (load.PromMetrics()), and serves the live page of a load run.
//
//   - grafana-load.json: a Grafana dashboard over the Prometheus metrics of
//     tasksim load --prom (tasks/s, p99 time to result, discovery delay,
//     requests/s, in flight, start lag, per mode). Its test runs a real
//     load and checks that every metric each query names exists and moves.
//   - live.html: the page of tasksim load --dashboard, plain HTML and JS
//     with no external resources, polling /progress every second.
//
// Data flow of the live page:
//
//	load.Run ─(Progress every interval)─▶ Live.Update ─▶ snapshot (+ history)
//	                                                         │
//	browser: live.html ─(GET /progress every second)────────┘ ─▶ table + SVG sparklines
//
// Example:
//
//	live := dashboards.NewLive("tasksim load")
//	go http.Serve(ln, live)
//	res, err := load.Run(ctx, cfg, load.Options{Targets: targets, Progress: live.Update})
package dashboards

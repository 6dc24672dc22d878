package dashboards

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/tasksim/tasksim/load"
)

// historyLen is how many intervals of tasks/s Live keeps per mode for the
// sparklines.
const historyLen = 120

// Live serves a load run's live page: / is the page, /progress the latest
// figures as JSON (LiveProgress). Update feeds it; it is safe for
// concurrent use.
type Live struct {
	mu   sync.Mutex
	snap LiveProgress
}

// LiveProgress is what /progress answers. Durations are in milliseconds.
type LiveProgress struct {
	Title     string     `json:"title"`
	Updates   int        `json:"updates"`
	ElapsedMs float64    `json:"elapsedMs"`
	PlannedMs float64    `json:"plannedMs"`
	Draining  bool       `json:"draining"`
	Started   int64      `json:"started"`
	Completed int64      `json:"completed"`
	Failed    int64      `json:"failed"`
	InFlight  int64      `json:"inFlight"`
	Modes     []LiveMode `json:"modes"`
}

// LiveMode is one mode's live figures; TTR, discovery and lag are of the
// last interval, History its last tasks/s figures, oldest first.
type LiveMode struct {
	Name           string    `json:"name"`
	Started        int64     `json:"started"`
	Completed      int64     `json:"completed"`
	Failed         int64     `json:"failed"`
	InFlight       int64     `json:"inFlight"`
	TasksPerSec    float64   `json:"tasksPerSec"`
	TTRP50Ms       float64   `json:"ttrP50Ms"`
	TTRP99Ms       float64   `json:"ttrP99Ms"`
	DiscoveryP50Ms float64   `json:"discoveryP50Ms"`
	DiscoveryP99Ms float64   `json:"discoveryP99Ms"`
	LagMaxMs       float64   `json:"lagMaxMs"`
	History        []float64 `json:"history"`
}

// NewLive returns a Live whose page shows title.
func NewLive(title string) *Live {
	return &Live{snap: LiveProgress{Title: title, Modes: []LiveMode{}}}
}

// Update takes a run's progress (a load.Options.Progress function).
func (l *Live) Update(p load.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	hist := map[string][]float64{}
	for _, m := range l.snap.Modes {
		hist[m.Name] = m.History
	}
	s := LiveProgress{Title: l.snap.Title, Updates: l.snap.Updates + 1, ElapsedMs: msOf(p.Elapsed), PlannedMs: msOf(p.Planned),
		Draining: p.Draining, Started: p.Started, Completed: p.Completed, Failed: p.Failed, InFlight: p.InFlight}
	for _, m := range p.Modes {
		h := append(hist[m.Name], m.TasksPerSec)
		if len(h) > historyLen {
			h = h[len(h)-historyLen:]
		}
		s.Modes = append(s.Modes, LiveMode{Name: m.Name, Started: m.Started, Completed: m.Completed, Failed: m.Failed, InFlight: m.InFlight,
			TasksPerSec: m.TasksPerSec, TTRP50Ms: msOf(m.TTRP50), TTRP99Ms: msOf(m.TTRP99),
			DiscoveryP50Ms: msOf(m.DiscoveryP50), DiscoveryP99Ms: msOf(m.DiscoveryP99), LagMaxMs: msOf(m.LagMax), History: h})
	}
	l.snap = s
}

// Snapshot returns the latest figures.
func (l *Live) Snapshot() LiveProgress {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.snap
	s.Modes = append([]LiveMode(nil), s.Modes...)
	return s
}

// ServeHTTP serves the page at / and the figures at /progress.
func (l *Live) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
		_, _ = w.Write(livePage)
	case "/progress":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(l.Snapshot())
	default:
		http.NotFound(w, r)
	}
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

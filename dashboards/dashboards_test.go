package dashboards

import (
	"bytes"
	"testing"
)

// TestGrafanaLoadIsTheCallersOwn: a caller that overwrites the dashboard
// it was given changes nothing the next caller sees.
func TestGrafanaLoadIsTheCallersOwn(t *testing.T) {
	want := bytes.Clone(GrafanaLoad())
	clear(GrafanaLoad())
	if got := GrafanaLoad(); len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("GrafanaLoad after a caller cleared its copy: %d bytes differ from the embedded %d", len(got), len(want))
	}
}

package server

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// TestStateRandSealsAlike: two servers whose StateRand is seeded alike
// seal the same requestState for the same request, so that a seeded
// simulation writes the same trace every run; another seed seals
// another. The key used to come from crypto/rand whatever the options.
func TestStateRandSealsAlike(t *testing.T) {
	state := func(seed uint64) string {
		var got string
		synctest.Test(t, func(t *testing.T) {
			s := New(&Options{Clock: clock.NewSim(time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)), StateRand: rand.NewChaCha8([32]byte{byte(seed)})})
			defer s.Close()
			msg, err := mcp.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + ToolWithTask + `","arguments":{},` +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},` +
				`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`))
			if err != nil {
				t.Fatal(err)
			}
			r := make(finals, 1)
			s.HandleStateless(t.Context(), msg, r)
			synctest.Wait()
			var m *mcp.Message
			select {
			case m = <-r:
			default:
			}
			if m == nil || m.Error != nil {
				t.Fatalf("tools/call: %+v", m)
			}
			var res struct {
				RequestState string `json:"requestState"`
			}
			if err := json.Unmarshal(m.Result, &res); err != nil || res.RequestState == "" {
				t.Fatalf("no requestState in %s (%v)", m.Result, err)
			}
			got = res.RequestState
		})
		return got
	}
	if a, b := state(1), state(1); a != b {
		t.Errorf("one seed sealed two requestStates: %s, %s", a, b)
	}
	if a, b := state(1), state(2); a == b {
		t.Errorf("two seeds sealed one requestState: %s", a)
	}
}

// Package suite is tasksim's scenario catalog and the runners that play
// it: the check suite behind tasksim check. Scripted clients drive
// anyone's MCP task server, scenario by scenario (RunSuite), and a
// scripted server drives anyone's client (RunClientSuite, over HTTP or,
// through a relay, over stdio), while every message is recorded into a
// trace that the rule checker (check) judges, rule by rule.
//
//	Suite ──▶ per scenario: trace writer ──▶ recorder (HTTP proxy or stdio Conn)
//	                │                              │
//	                ▼                              ▼
//	   scripted client (+ faults.Conn) ──────▶ server under test
//	                │
//	                ▼
//	   check.Check(trace) + the scenario's own assertions ──▶ ScenarioResult
//	                                                          (per rule PASS / FAIL / SKIP)
//
// A scenario that cannot apply to the target (a capability it does not
// declare, no suitable tool) is SKIP with the reason, never PASS.
//
// Example:
//
//	res, err := suite.RunSuite(ctx, suite.Target{URL: "http://127.0.0.1:7070/mcp"}, nil)
//	for _, r := range res.Scenarios {
//		fmt.Println(r.Name, r.Status)
//	}
package suite

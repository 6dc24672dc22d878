// Package harness is what the scenario suite (sim/suite) and replay
// (sim/replay) share to stand a peer under test up, record it and judge
// it: the server or client under test (Target, ClientTarget), the error of
// one that cannot be reached (ErrUnreachable), running a client under test
// (RunClient), serving on loopback (ServeLoopback), the recording proxy
// that keeps its trace in causal order (RecordGate, StartRecordingProxy)
// and judging a trace file by one side's rules (JudgeTrace).
//
//	suite ─┐                                  ┌─▶ ServeLoopback ─▶ RecordGate ─▶ recorder.Proxy ─▶ Target
//	       ├─▶ Target / ClientTarget / RunClient
//	replay ┘                                  └─▶ trace file ─▶ JudgeTrace ─▶ check.Verdict
//
// Example:
//
//	base, proxy, stop, err := harness.StartRecordingProxy(upstream, w)
//	if err == nil {
//		defer stop()
//		_ = proxy // the client under test talks to base; w gets every byte in causal order
//	}
package harness

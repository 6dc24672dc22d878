package load

import (
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp/client"
)

// BenchmarkRecord measures the generator's own cost per task: turning a
// call's result (a 25-segment streaming call) into a sample and
// recording it into a shard, from as many goroutines as processors.
//
//	go test -run '^$' -bench Record ./load
func BenchmarkRecord(b *testing.B) {
	start := time.Now()
	res := &client.CallResult{Complete: true, Answer: client.AnswerStreaming, Segments: 25, Start: start, End: start.Add(time.Second), CompletedAt: start.Add(999 * time.Millisecond),
		FirstContent: start.Add(40 * time.Millisecond), HTTPRequests: 1}
	shards := []*shard{newShard(1), newShard(1)}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		k := 0
		for pb.Next() {
			s := measure(res, nil, start, false, false)
			sh := shards[k%len(shards)]
			sh.recordStart(0, 50*time.Microsecond)
			sh.record(0, &s)
			k++
		}
	})
}

// BenchmarkPacer measures one scheduling decision.
//
//	go test -run '^$' -bench Pacer ./load
func BenchmarkPacer(b *testing.B) {
	p := Pacer{Rate: 20000, RampUp: 5 * time.Second, Duration: time.Minute}
	for i := 0; b.Loop(); i++ {
		p.Pace(time.Duration(i)*50*time.Microsecond, int64(i))
	}
}

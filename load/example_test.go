package load_test

import (
	"fmt"
	"time"

	"github.com/tasksim/tasksim/load"
)

// A pacer at 10 tasks/s after a 1 s ramp-up: the intended start of the
// first arrivals.
func ExamplePacer() {
	p := load.Pacer{Rate: 10, RampUp: time.Second, Duration: 2 * time.Second}
	var at []time.Duration
	for n := range int64(7) {
		at = append(at, p.At(n).Round(time.Millisecond))
	}
	fmt.Println(at)
	fmt.Println(p.Total(), "arrivals")
	// Output:
	// [0s 447ms 632ms 775ms 894ms 1s 1.1s]
	// 15 arrivals
}

func ExampleParseThreshold() {
	t, err := load.ParseThreshold("poll:100ms.discovery.mean<=55ms")
	if err != nil {
		panic(err)
	}
	fmt.Println(t.Mode, t.Metric, t.Stat, t.Op, t.Value)
	// Output:
	// poll:100ms discovery mean <= 55
}

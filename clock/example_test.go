package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tasksim/tasksim/clock"
)

// An hour of simulated sleep, over as soon as the sleeper waits.
func ExampleSim_RunUntil() {
	ctx, release := clock.Confine(context.Background())
	defer release()
	c := clock.NewSim(time.Unix(0, 0))
	done := make(chan struct{})
	go func() {
		_ = clock.Sleep(ctx, c, time.Hour)
		close(done)
	}()
	err := c.RunUntil(ctx, func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	fmt.Println(c.Now().Sub(time.Unix(0, 0)), err)
	// Output: 1h0m0s <nil>
}

//go:build race

package sim

// raceDetector says the race detector is on (see TestDeterminism).
const raceDetector = true

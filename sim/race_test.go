//go:build race

package sim

// raceDetector says the race detector is on (see TestThousandSeeds).
const raceDetector = true

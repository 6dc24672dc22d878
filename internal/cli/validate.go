package cli

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// bound is what a numeric flag accepts.
type bound int

const (
	nonNegative bound = iota // the default: 0 and up (0 often means "none" or "the default")
	positive                 // above 0
	anyValue                 // negative has a meaning (e.g. "never")
	atLeastOne               // a count given as N or A..B: every value at least 1
	fraction                 // 0 to 1
)

// flagBounds names the numeric flags that do not take the default,
// nonNegative, by command path and flag name. Every flag of type int,
// int64, uint64, float64 or duration is checked; floats must also be
// finite. A new numeric flag is covered as soon as it exists:
// TestNumericFlagsValidated tries a negative value on every one.
var flagBounds = map[string]bound{
	"tasksim serve --poll-interval":         positive,
	"tasksim serve --default-ttl":           positive,
	"tasksim serve --max-ttl":               positive,
	"tasksim serve --max-tasks-per-session": positive,
	"tasksim serve --max-body":              positive,
	"tasksim serve --session-idle-timeout":  anyValue, // negative: never
	"tasksim call --timeout":                positive,
	"tasksim load --rate":                   positive,
	"tasksim load --sessions":               positive,
	"tasksim load --timeout":                positive,
	"tasksim load --max-lag":                positive,
	"tasksim load --max-in-flight":          positive,
	"tasksim load --max-failure-rate":       fraction,
	"tasksim load --chunks":                 atLeastOne,
	"tasksim load --chunk-size":             atLeastOne,
	"tasksim demo --rate":                   positive,
	"tasksim demo --duration":               positive,
	"tasksim report merge --interval":       positive,
	"tasksim sim --seeds":                   positive,
	"tasksim sim --tasks":                   positive,
	"tasksim sim --fault-rate":              fraction,
}

// validateNumbers checks every numeric flag of cmd against its bound, in
// one pass before any command runs; the first bad value is a usage error
// (exit 2) naming the flag.
func validateNumbers(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		b, named := flagBounds[cmd.CommandPath()+" --"+f.Name]
		if b == atLeastOne {
			err = checkCounts(f)
			return
		}
		v, ok := numericValue(f)
		if !ok {
			return
		}
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			err = usagef("--%s %s: want a finite number", f.Name, f.Value)
		case b == positive && v <= 0:
			err = usagef("--%s %s: must be positive", f.Name, f.Value)
		case b == fraction && (v < 0 || v > 1):
			err = usagef("--%s %s: want a fraction from 0 to 1", f.Name, f.Value)
		case (b == nonNegative || !named) && v < 0:
			err = usagef("--%s %s: must not be negative", f.Name, f.Value)
		}
	})
	return err
}

// numericValue returns the value of a numeric flag.
func numericValue(f *pflag.Flag) (float64, bool) {
	s := f.Value.String()
	switch f.Value.Type() {
	case "duration":
		d, err := time.ParseDuration(s)
		return float64(d), err == nil
	case "int", "int64", "int32", "uint", "uint64", "uint32", "float64", "float32":
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	}
	return 0, false
}

// checkCounts checks a flag of the form N or A..B whose values must all be
// at least 1 (chunks, chunk sizes). Other mistakes in it are left to its
// parser, which says more.
func checkCounts(f *pflag.Flag) error {
	lo, _, _ := strings.Cut(f.Value.String(), "..")
	if n, err := strconv.Atoi(strings.TrimSpace(lo)); err == nil && n < 1 {
		return usagef("--%s %s: must be at least 1", f.Name, f.Value)
	}
	return nil
}

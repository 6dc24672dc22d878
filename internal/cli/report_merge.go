package cli

import (
	"bytes"
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/load"
)

func newCmdReportMerge(st *State) *cobra.Command {
	var out string
	var width time.Duration
	cmd := &cobra.Command{
		Use:   "merge -o OUT.hlog A.hlog B.hlog ...",
		Short: "Merge HdrHistogram interval logs exactly",
		Long: `Merge the interval logs (tasksim load --hlog) of several runs or load
generators into one: the histograms with the same tag (MODE.METRIC) whose
interval starts in the same slot of --interval are added up. Percentiles are
never averaged: the merged log's totals are the histograms of all the inputs
together, as if one generator had done all the work.`,
		Example: `  tasksim report merge -o all.hlog part-0.hlog part-1.hlog part-2.hlog`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if out == "" {
				return usagef("give the merged log's file with -o")
			}
			if width < time.Millisecond {
				return usagef("--interval %v: want at least 1ms", width)
			}
			logs := make([]io.Reader, len(args))
			for i, name := range args {
				b, err := readInput(name)
				if err != nil {
					return err
				}
				if err := checkHlog(b); err != nil {
					return usagef("%s: not an interval log: %v", name, err)
				}
				logs[i] = bytes.NewReader(b)
			}
			var buf bytes.Buffer
			if err := load.MergeHlogs(&buf, width, logs...); err != nil {
				return usagef("%v", err)
			}
			return writeBytes(st, out, buf.Bytes())
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", `write the merged log to FILE ("-": stdout)`)
	cmd.Flags().DurationVar(&width, "interval", load.DefaultInterval, "width of the merged intervals")
	return cmd
}

// checkHlog reports whether b is an interval log with at least one
// interval.
func checkHlog(b []byte) error {
	n := 0
	for _, err := range load.HlogIntervals(bytes.NewReader(b)) {
		if err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return errors.New("no interval histograms")
	}
	return nil
}

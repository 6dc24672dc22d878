package child_test

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/child"
)

func TestCapped(t *testing.T) {
	c := child.NewCapped(5)
	if n, err := c.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("write within the limit: %d, %v", n, err)
	}
	n, err := c.Write([]byte("defg"))
	if n != 2 || !errors.Is(err, child.ErrOutputLimit) {
		t.Fatalf("write past the limit: %d, %v; want 2 and ErrOutputLimit", n, err)
	}
	if c.String() != "abcde" || !c.Over() {
		t.Errorf("kept %q, over %v; want abcde, over", c.String(), c.Over())
	}
}

func TestTail(t *testing.T) {
	cases := []struct {
		name   string
		writes []string
		want   string
	}{
		{"none", nil, ""},
		{"one line", []string{"hello\n"}, "hello"},
		{"split writes, blank end", []string{"first\nsec", "ond\n\n  \n"}, "second"},
		{"long line cut on a rune", []string{strings.Repeat("é", 150)}, strings.Repeat("é", 100) + "…"},
		{"past what is kept", []string{strings.Repeat("x\n", 5000), "last"}, "last"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var copy strings.Builder
			tl := &child.Tail{W: &copy}
			for _, w := range tc.writes {
				tl.Write([]byte(w))
			}
			if got := tl.Last(); got != tc.want {
				t.Errorf("Last() = %q, want %q", got, tc.want)
			}
			if copy.String() != strings.Join(tc.writes, "") {
				t.Error("the writes were not passed on whole")
			}
		})
	}
}

// TestCommandFlooding: a child flooding a Capped stdout is stopped by the
// broken pipe; the run ends with the limit's error kept.
func TestCommandFlooding(t *testing.T) {
	cmd := child.Command(context.Background(), 0, "yes")
	out := child.NewCapped(1 << 16)
	cmd.Stdout = out
	cmd.Stderr = io.Discard
	err := cmd.Run()
	child.End(cmd, 0)
	var ee *exec.ExitError
	if err == nil || !errors.As(err, &ee) && !errors.Is(err, child.ErrOutputLimit) {
		t.Errorf("run: %v, want the child stopped", err)
	}
	if !out.Over() || len(out.String()) != 1<<16 {
		t.Errorf("kept %d bytes, over %v", len(out.String()), out.Over())
	}
}

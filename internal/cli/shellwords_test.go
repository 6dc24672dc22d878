package cli

import (
	"slices"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string
		err  bool
	}{
		{"plain", "node server.js --port 3", []string{"node", "server.js", "--port", "3"}, false},
		{"extra spaces", "  a \t b  ", []string{"a", "b"}, false},
		{"single quotes", `sh -c 'echo "hi there"'`, []string{"sh", "-c", `echo "hi there"`}, false},
		{"double quotes with escapes", `a "b \"c\" \\d" e`, []string{"a", `b "c" \d`, "e"}, false},
		{"backslash space", `a\ b c`, []string{"a b", "c"}, false},
		{"empty quotes are a word", `a '' b`, []string{"a", "", "b"}, false},
		{"joined quoting", `--x='1 2'"3"`, []string{"--x=1 23"}, false},
		{"empty", "", nil, false},
		{"unterminated single", `a 'b`, nil, true},
		{"unterminated double", `a "b`, nil, true},
		{"trailing backslash", `a \`, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := splitCommand(tc.in)
			if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
				t.Errorf("splitCommand(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
			}
		})
	}
}

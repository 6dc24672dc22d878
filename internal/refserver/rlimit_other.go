//go:build !unix

package refserver

// openFileLimit is unknown here: MaxConns keeps its default.
func openFileLimit() int { return 0 }

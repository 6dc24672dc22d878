//go:build !unix

package httplimit

// openFileLimit is unknown here: MaxConns keeps its default.
func openFileLimit() int { return 0 }

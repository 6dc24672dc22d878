package server_test

import (
	"testing"

	"github.com/tasksim/tasksim/mcp/server"
)

// ChunkText's texts are what clients check order and completeness by:
// a label, padded to the size with a letter that cycles every 26 chunks.
func TestChunkText(t *testing.T) {
	for _, tc := range []struct {
		i, size int
		want    string
	}{
		{1, 16, "chunk 1;aaaaaaaa"},
		{2, 10, "chunk 2;bb"},
		{27, 12, "chunk 27;aaa"},
		{26, 9, "chunk 26;"},
		{123456, 5, "chunk"},
		{3, 0, ""},
	} {
		if got := server.ChunkText(tc.i, tc.size); got != tc.want {
			t.Errorf("ChunkText(%d, %d) = %q, want %q", tc.i, tc.size, got, tc.want)
		}
	}
}

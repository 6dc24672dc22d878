package mcp_test

import (
	"testing"

	"github.com/tasksim/tasksim/mcp"
)

// benchMessages are the two messages tasksim moves most: a poll and a
// streaming response.
var benchMessages = []struct {
	name string
	json string
}{
	{
		name: "tasks_get_request",
		json: `{"jsonrpc":"2.0","id":42,"method":"tasks/get","params":{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840"}}`,
	},
	{
		name: "partial_content_response",
		json: `{"jsonrpc":"2.0","id":1,"result":{"partial-content":[{"seqNr":1,"type":"text","text":"Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"},{"seqNr":2,"type":"text","text":"Suggested activities:\n- Visit Central Park\n- Explore the Metropolitan Museum of Art"}],"isError":false,"isComplete":false,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840"}}}}`,
	},
}

func BenchmarkDecodeMessage(b *testing.B) {
	for _, bm := range benchMessages {
		b.Run(bm.name, func(b *testing.B) {
			data := []byte(bm.json)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := mcp.DecodeMessage(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	for _, bm := range benchMessages {
		b.Run(bm.name, func(b *testing.B) {
			msg, err := mcp.DecodeMessage([]byte(bm.json))
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 0, 1024)
			b.SetBytes(int64(len(bm.json)))
			b.ReportAllocs()
			for b.Loop() {
				if buf, err = msg.AppendJSON(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkContentBlockMembers decodes blocks that are not plain text,
// which take the map-of-members path (decodeMembers).
func BenchmarkContentBlockMembers(b *testing.B) {
	for _, bm := range []struct{ name, json string }{
		{"image", `{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==","mimeType":"image/png","annotations":{"audience":["user"]}}`},
		{"resource_link", `{"type":"resource_link","uri":"file:///tmp/report.txt","name":"report","title":"Report","description":"the run's report","mimeType":"text/plain","size":1234,"_meta":{"k":1},"x-extra":true}`},
	} {
		b.Run(bm.name, func(b *testing.B) {
			data := []byte(bm.json)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var c mcp.ContentBlock
				if err := c.UnmarshalJSON(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package traces

import (
	"time"
)

// Stats summarise a trace.
type Stats struct {
	Records uint64 `json:"records"`
	// Duration is the Offset of the last record.
	Duration time.Duration `json:"durationNs"`
	// First and Last are the wall times of the first and last records.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
	// RawBytes sums the records' Raw lengths. ClientBytes and ServerBytes
	// are the payload bytes by direction: per stream, its body chunks and
	// stdio lines if it has any, else its messages and SSE events (so a
	// recorder that keeps both is not counted twice).
	RawBytes    int64 `json:"rawBytes"`
	ClientBytes int64 `json:"clientBytes"`
	ServerBytes int64 `json:"serverBytes"`
	Conns       int   `json:"conns"`
	Exchanges   int   `json:"exchanges"`
	Streams     int   `json:"streams"`
	// Tasks counts distinct task ids in JSON-RPC messages.
	Tasks int `json:"tasks"`
	// Kinds counts records by kind name.
	Kinds map[string]int `json:"kinds"`
	// Methods counts requests and notifications by method.
	Methods map[string]int `json:"methods"`
	// Statuses counts HTTP response statuses.
	Statuses map[int]int `json:"httpStatuses"`
	// Responses and ErrorResponses count JSON-RPC responses.
	Responses      int `json:"responses"`
	ErrorResponses int `json:"errorResponses"`
	// Segments counts SEP-1905 partial-content segments (seqNr values),
	// Partials SEP-2679 partial notifications.
	Segments int `json:"segments"`
	Partials int `json:"partials"`
}

// Summarize reads src to its end and returns its Stats. It returns the
// Stats so far with the error that stopped it.
func Summarize(src Source) (Stats, error) {
	s := Stats{Kinds: map[string]int{}, Methods: map[string]int{}, Statuses: map[int]int{}}
	conns := map[uint64]bool{}
	exchanges := map[uint64]bool{}
	streams := map[string]bool{}
	tasks := map[string]bool{}
	payload := map[streamDir]*[2]int64{} // [0]: chunks and lines, [1]: messages and events
	for rec, err := range All(src) {
		if err != nil {
			s.finish(conns, exchanges, streams, tasks, payload)
			return s, err
		}
		if s.Records == 0 {
			s.First = rec.Wall
		}
		s.Records++
		s.Last = rec.Wall
		s.Duration = rec.Offset
		s.RawBytes += int64(len(rec.Raw))
		s.Kinds[rec.Kind.String()]++
		if rec.Conn != 0 {
			conns[rec.Conn] = true
		}
		if rec.Exchange != 0 {
			exchanges[rec.Exchange] = true
		}
		if rec.Stream != "" {
			streams[rec.Stream] = true
		}
		if k := (streamDir{rec.Conn, rec.Stream, rec.Dir}); len(rec.Raw) > 0 {
			switch rec.Kind {
			case KindBodyChunk, KindStdioLine:
				counts(payload, k)[0] += int64(len(rec.Raw))
			case KindMessage, KindSSEEvent:
				counts(payload, k)[1] += int64(len(rec.Raw))
			}
		}
		if rec.Kind == KindResponseHead && rec.HTTP != nil {
			s.Statuses[rec.HTTP.Status]++
		}
		if p := rec.RPC; p != nil {
			switch p.Type {
			case "request", "notification":
				s.Methods[p.Method]++
			case "response":
				s.Responses++
				if p.ErrorCode != 0 {
					s.ErrorResponses++
				}
			}
			if p.TaskID != "" {
				tasks[p.TaskID] = true
			}
			s.Segments += len(p.SeqNrs)
			if p.HasSeq {
				s.Partials++
			}
		}
	}
	s.finish(conns, exchanges, streams, tasks, payload)
	return s, nil
}

func (s *Stats) finish(conns, exchanges map[uint64]bool, streams, tasks map[string]bool, payload map[streamDir]*[2]int64) {
	s.Conns, s.Exchanges, s.Streams, s.Tasks = len(conns), len(exchanges), len(streams), len(tasks)
	for k, p := range payload {
		n := p[0]
		if n == 0 {
			n = p[1]
		}
		switch k.dir {
		case DirClientToServer:
			s.ClientBytes += n
		case DirServerToClient:
			s.ServerBytes += n
		}
	}
}

type streamDir struct {
	conn   uint64
	stream string
	dir    Direction
}

func counts(m map[streamDir]*[2]int64, k streamDir) *[2]int64 {
	p := m[k]
	if p == nil {
		p = new([2]int64)
		m[k] = p
	}
	return p
}

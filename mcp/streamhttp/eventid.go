package streamhttp

import (
	"strconv"
	"strings"
)

// Event ids name their logical stream, so that a Last-Event-ID can be
// correlated with the stream it came from (2025-11-25 Transports,
// "Resumability and Redelivery": ids "SHOULD encode sufficient information
// to identify the originating stream" and "MUST be globally unique across
// all streams within that session").
//
// The grammar, all numbers decimal:
//
//	S_E      message number E (from 1) of stream S
//	S_0      the priming event of POST stream S (S >= 1)
//	0_E_K    the K-th priming event of the standalone stream (stream 0),
//	         sent when the client had been given events up to E
//
// Stream 0 is the session's standalone GET stream; POST streams count from
// 1. Every id means "the client has everything of stream S up to event E",
// so resuming from it replays from E+1. Priming events of the standalone
// stream carry K because several GETs may prime at the same E, and ids must
// stay unique.

// appendEventID appends the id of message e of stream s.
func appendEventID(dst []byte, s, e uint64) []byte {
	dst = strconv.AppendUint(dst, s, 10)
	dst = append(dst, '_')
	return strconv.AppendUint(dst, e, 10)
}

// primingID returns the id of a priming event on stream s after event e; k
// is 0 for the one priming event of a POST stream (whose e is always 0) and
// the standalone stream's priming counter otherwise.
func primingID(s, e, k uint64) string {
	b := appendEventID(make([]byte, 0, 32), s, e)
	if k > 0 {
		b = append(b, '_')
		b = strconv.AppendUint(b, k, 10)
	}
	return string(b)
}

// parseEventID reads an id made by appendEventID or primingID and returns
// its stream and event numbers. It rejects anything else: signs, spaces,
// leading zeros (every id this package makes is canonical), and numbers
// beyond uint64.
func parseEventID(id string) (stream, event uint64, ok bool) {
	s, rest, found := strings.Cut(id, "_")
	if !found {
		return 0, 0, false
	}
	e, k, three := strings.Cut(rest, "_")
	if stream, ok = parseCounter(s); !ok {
		return 0, 0, false
	}
	if event, ok = parseCounter(e); !ok {
		return 0, 0, false
	}
	if three {
		// Only the standalone stream has numbered primings.
		if n, ok := parseCounter(k); !ok || n == 0 || stream != 0 {
			return 0, 0, false
		}
	}
	return stream, event, true
}

// parseCounter parses a canonical decimal uint64.
func parseCounter(s string) (uint64, bool) {
	if s == "" || len(s) > 20 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

package check

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// finishSession judges what waited for the end: streams cut before their
// response that nobody resumed (CLIENT-RESUME) and resumptions that ended
// without replaying every event due (HTTP-RESUME-COMPLETE).
func (c *Checker) finishSession(s *session) {
	roots := slices.Collect(maps.Keys(s.resumes))
	slices.SortFunc(roots, func(a, b *stream) int { return cmp.Compare(a.ex.rec, b.ex.rec) })
	for _, root := range roots {
		for _, st := range s.resumes[root] {
			// A resumption the client cut may have had the rest to come.
			if st.next < len(st.due) && !st.cut {
				c.lostEvents(st, st.due[st.next:], 0)
				st.next = len(st.due)
			}
		}
	}
	for _, st := range s.cutStreams {
		r := s.requests[st.rpcID]
		switch {
		case r == nil, st.resumedBy != nil: // judged when it was resumed
		case askedTask(s, st):
			c.ok(RuleClientResume)
		case !r.answered:
			// A session the client deleted instead is no excuse: the
			// result was lost all the same (Resumability and Redelivery;
			// SEP-1905, Client Implementation Guide › Error Handling,
			// Connection Loss).
			why, recs := "the stream answering request "+st.rpcID+" ("+st.method+") broke and the client never resumed it nor asked for the task", []uint64{st.cutRec}
			if s.deleted && s.deletedRec > st.cutRec {
				why += "; it deleted its session instead"
				recs = append(recs, s.deletedRec)
			}
			c.fail(RuleClientResume, why, recs...)
		}
	}
}

// askedTask reports whether the client asked for a task the cut stream
// created, so that what the stream would have carried reached it another
// way: a tasks/get or tasks/result after the cut, or a tasks/result, sent
// before or after it, answered with the rest of the result (SEP-1905,
// Client Handling of Multiple Mechanisms: the client merges segments from
// every mechanism, and may ask tasks/result the moment it sees a gap). A
// client that has the whole result may let the stream go: nothing it
// carries is new (SEP-1905, Relationship to Existing Tasks Specification:
// tasks/result without lastSeqNr returns every segment, merged).
func askedTask(s *session, st *stream) bool {
	for _, t := range st.tasksCreated {
		for _, q := range s.requests {
			if q.task != t || (q.method != "tasks/result" && q.method != "tasks/get") {
				continue
			}
			if q.rec > st.cutRec || q.whole {
				return true
			}
		}
	}
	return false
}

// checkIDEntropy judges rule, TASK-ID-ENTROPY (2025-11-25 Behavior
// Requirements › Task ID Requirements; Security Considerations: ids must
// not be guessable) or S2663-ID-ENTROPY (Tasks extension, Security
// Considerations), on ids in the order they were given out. Two ids that
// differ only by a counter, or ids of fewer than 64 bits of characters,
// fail.
func (c *Checker) checkIDEntropy(rule RuleID, ids []taskIDSeen) {
	if len(ids) < 2 {
		return
	}
	for i, cur := range ids {
		bits := float64(len(cur.id)) * math.Log2(float64(alphabet(cur.id)))
		if bits < 64 {
			c.fail(rule, "task id "+strconv.Quote(cur.id)+" carries at most "+strconv.Itoa(int(bits))+" bits; want an unguessable id (a UUIDv4 has 122)", cur.rec)
			continue
		}
		if i > 0 && sequential(ids[i-1].id, cur.id) {
			c.fail(rule, "task ids "+strconv.Quote(ids[i-1].id)+" and "+strconv.Quote(cur.id)+" are sequential", ids[i-1].rec, cur.rec)
			continue
		}
		c.ok(rule)
	}
}

// alphabet estimates the size of the alphabet an id is drawn from.
func alphabet(id string) int {
	var digits, lower, upper, other bool
	for _, r := range id {
		switch {
		case r >= '0' && r <= '9':
			digits = true
		case r >= 'a' && r <= 'f':
			lower = true
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			upper = true
		case r != '-':
			other = true
		}
	}
	n := 0
	if digits {
		n += 10
	}
	if lower {
		n += 6
	}
	if upper {
		n += 40
	}
	if other {
		n += 10
	}
	return max(n, 2)
}

// sequential reports whether b is a with its trailing number plus one.
func sequential(a, b string) bool {
	pa, na := splitNumber(a)
	pb, nb := splitNumber(b)
	return pa == pb && na >= 0 && nb == na+1
}

func splitNumber(s string) (string, int64) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 18 {
		return s, -1
	}
	n, _ := strconv.ParseInt(s[i:], 10, 64)
	return strings.ToLower(s[:i]), n
}

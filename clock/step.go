package clock

// StepOne fires the single earliest pending timer (by deadline, then by
// creation), moving the clock to its deadline. It reports false, moving
// nothing, when none is pending. RunUntil steps one timer at a time, so
// that the effects of one settle before the next fires, even when several
// are due at the same instant.
func (s *Sim) StepOne() bool {
	s.mu.Lock()
	if len(s.timers) == 0 {
		s.mu.Unlock()
		return false
	}
	next := s.timers[0].deadline
	s.mu.Unlock()
	return s.fireNext(next)
}

package sse

import (
	"errors"
	"time"
)

// Event is one server-sent event.
type Event struct {
	// ID is the value of the event's "id" field; see HasID.
	ID string
	// HasID reports that the event carried an id field. An empty id is
	// meaningful: it resets the last event ID.
	HasID bool
	// Name is the "event" field; "" means the default type "message".
	Name string
	// Data is the event's data lines joined with "\n".
	Data string
	// Retry is the "retry" field (the reconnection time), 0 if absent.
	// On the wire it is whole milliseconds.
	Retry time.Duration
	// HasRetry reports that the event carried a valid retry field.
	HasRetry bool
}

var (
	// ErrLineTooLong means a line of the stream is longer than the reader's
	// MaxLine.
	ErrLineTooLong = errors.New("sse: line too long")
	// ErrEventTooLong means an event's data is longer than the reader's
	// MaxEvent.
	ErrEventTooLong = errors.New("sse: event too long")
	// ErrInvalidField means an event cannot be encoded: its id or name holds
	// CR, LF or NUL, or its retry is negative.
	ErrInvalidField = errors.New("sse: invalid field")
)

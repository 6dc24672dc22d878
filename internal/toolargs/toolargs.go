package toolargs

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// Values are what the placeholders of a template stand for.
type Values struct {
	Task       int64   // {{task}}: the call's number: 0, 1, 2, ...
	Draw       float64 // {{draw}}: a number in [0, 1)
	DurationMs int64   // {{durationMs}}: how long the tool should work, in ms
	Chunks     int     // {{chunks}}: in how many chunks
	ChunkSize  int     // {{chunkSize}}: of how many bytes each
}

// Placeholders returns the placeholders Fill replaces, in a slice of the
// caller's own.
func Placeholders() []string {
	return []string{"{{task}}", "{{draw}}", "{{durationMs}}", "{{chunks}}", "{{chunkSize}}"}
}

// Fill returns tmpl with each placeholder replaced by its value, as a
// JSON number.
func Fill(tmpl string, v Values) []byte {
	r := strings.NewReplacer(
		"{{task}}", strconv.FormatInt(v.Task, 10),
		"{{draw}}", strconv.FormatFloat(v.Draw, 'f', -1, 64),
		"{{durationMs}}", strconv.FormatInt(v.DurationMs, 10),
		"{{chunks}}", strconv.Itoa(v.Chunks),
		"{{chunkSize}}", strconv.Itoa(v.ChunkSize),
	)
	return []byte(r.Replace(tmpl))
}

// Shaped reports whether tmpl lets the caller set how long the tool
// works: it holds {{durationMs}} or {{chunks}}.
func Shaped(tmpl string) bool {
	return strings.Contains(tmpl, "{{durationMs}}") || strings.Contains(tmpl, "{{chunks}}")
}

// Check reports whether tmpl, its placeholders filled, is a JSON object.
func Check(tmpl string) error {
	return Object(Fill(tmpl, Values{}))
}

// Object reports whether b is a JSON object.
func Object(b []byte) error {
	if !json.Valid(b) || !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return errors.New("not a JSON object")
	}
	return nil
}

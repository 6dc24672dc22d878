package mcp

import "slices"

// MethodLoggingSetLevel sets the least severe level of the
// notifications/message a server sends the client (MCP 2025-11-25,
// server utilities, "Logging"; a server that declares the logging
// capability must answer it).
const MethodLoggingSetLevel = "logging/setLevel"

// LoggingLevel is a syslog severity (RFC 5424) as MCP spells it.
type LoggingLevel string

// loggingLevels is the list LoggingLevels copies.
var loggingLevels = []LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LoggingLevels lists the levels from the least to the most severe, in a
// slice of the caller's own.
func LoggingLevels() []LoggingLevel { return slices.Clone(loggingLevels) }

// IsValid reports whether l is one of LoggingLevels.
func (l LoggingLevel) IsValid() bool { return slices.Contains(loggingLevels, l) }

// SetLevelParams are the params of logging/setLevel.
type SetLevelParams struct {
	Level LoggingLevel `json:"level"`
}

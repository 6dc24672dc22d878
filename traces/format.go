package traces

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// FormatVersion is the trace format version this package writes, and the
// newest it reads. It reads every version from MinFormatVersion on.
//
// Version 2 (from version 1): the header's seed is a uint64 and the header
// has a fault schedule; records have a structured fault and the side of
// the fault layer they were observed on. An older reader would take the
// records of both sides for one conversation, hence the new version.
//
// Version 3 (from version 2): what version 2 said in free text is typed:
// records say how a body, stream or connection ended (End), which message
// of a batch they are (Batch), whether an SSE block was dispatched
// (NoData); faults say what they did (Verb, Delay, Status). The Note and
// Action text is for humans from version 3 on and free to change, so a
// version 2 reader, which reads meaning out of it, must not read these
// files. This package reads older files with the typed fields filled from
// their text (upgrade).
const FormatVersion = 3

// MinFormatVersion is the oldest trace format version this package reads.
const MinFormatVersion = 1

// Magic opens every trace file. Like PNG's signature it holds a byte with
// the high bit set, a CR LF pair and a Ctrl-Z, so a file mangled by a text
// transfer (7-bit stripping, newline conversion) no longer looks like a
// trace. It is a constant so that no caller can change it.
const Magic = "\x89TASKSIMTRACE\r\n\x1a\n"

// MaxRecordSize caps the encoded size of one record (and of the header).
// A writer refuses bigger records with ErrTooLarge; a reader treats a
// bigger length prefix as corruption and never allocates for it.
const MaxRecordSize = 64 << 20

// A frame is the length-prefixed, checksummed envelope of the header and
// of every record:
//
//	len  uint32 big-endian: payload length in bytes
//	lcrc uint32 big-endian: CRC-32C of the 4 len bytes
//	crc  uint32 big-endian: CRC-32C of the payload
//	payload
//
// The length has its own checksum so that a reader can tell a file cut in
// the middle of a frame (truncation) from a damaged length (corruption).
const frameHeadSize = 12

// preambleSize is the magic plus the 2-byte format version.
const preambleSize = len(Magic) + 2

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func appendFrameHead(dst []byte, payload []byte) []byte {
	var l [4]byte
	binary.BigEndian.PutUint32(l[:], uint32(len(payload)))
	dst = append(dst, l[:]...)
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(l[:], castagnoli))
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(payload, castagnoli))
}

// parseFrameHead checks a frame head and returns the payload length and
// checksum. reason is non-empty when the head is damaged.
func parseFrameHead(h []byte) (n int, crc uint32, reason string) {
	l := h[0:4]
	if crc32.Checksum(l, castagnoli) != binary.BigEndian.Uint32(h[4:8]) {
		return 0, 0, "length checksum mismatch"
	}
	size := binary.BigEndian.Uint32(l)
	if size > MaxRecordSize {
		return 0, 0, fmt.Sprintf("record length %d exceeds the %d-byte limit", size, MaxRecordSize)
	}
	return int(size), binary.BigEndian.Uint32(h[8:12]), ""
}

var (
	// ErrNotTrace means the input does not start with Magic.
	ErrNotTrace = errors.New("not a tasksim trace")
	// ErrTruncated means the input ends inside a frame: a writer was killed
	// or the file was cut. Everything before the cut reads fine. Errors
	// that report it are *TruncatedError.
	ErrTruncated = errors.New("trace is truncated")
	// ErrTooLarge means a record encodes to more than MaxRecordSize bytes.
	ErrTooLarge = errors.New("record too large")
	// ErrClosed means the writer was closed.
	ErrClosed = errors.New("trace writer is closed")
)

// VersionError reports a trace written in a format version this package
// does not read (a newer one, or 0).
type VersionError struct {
	Version int // of the file
}

func (e *VersionError) Error() string {
	if e.Version > FormatVersion {
		return fmt.Sprintf("trace format version %d is newer than this tasksim reads (%d): upgrade tasksim", e.Version, FormatVersion)
	}
	return fmt.Sprintf("trace format version %d is not valid", e.Version)
}

// CorruptError reports damaged bytes: a checksum mismatch, an impossible
// length, a record that does not decode.
type CorruptError struct {
	// Header is true when the header frame is damaged; Index is then 0.
	Header bool
	// Index is the index of the damaged record: the records before it read
	// fine.
	Index uint64
	// Offset is the byte offset of the damaged frame in the file.
	Offset int64
	// Reason says what is wrong.
	Reason string
}

func (e *CorruptError) Error() string {
	if e.Header {
		return fmt.Sprintf("corrupt trace header (byte %d): %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("corrupt trace at record %d (byte %d): %s", e.Index, e.Offset, e.Reason)
}

// TruncatedError reports where a trace was cut. It wraps ErrTruncated.
type TruncatedError struct {
	// Header is true when the file ends before its header is whole.
	Header bool
	// Index is the index of the first record that is not whole: the count
	// of whole records.
	Index uint64
	// Offset is the byte offset where the incomplete frame starts, the
	// length of the readable part of the file.
	Offset int64
}

func (e *TruncatedError) Error() string {
	if e.Header {
		return fmt.Sprintf("trace cut inside its header (byte %d): %v", e.Offset, ErrTruncated)
	}
	return fmt.Sprintf("trace cut at record %d (byte %d) after %d whole records: %v", e.Index, e.Offset, e.Index, ErrTruncated)
}

func (e *TruncatedError) Unwrap() error { return ErrTruncated }

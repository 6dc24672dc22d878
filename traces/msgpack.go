package traces

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"
)

// decoder reads the msgpack subset the format uses from one payload. It
// is written for hostile input: every length is checked against the bytes
// left before anything is allocated, and nesting is bounded.
//
// Its error is sticky, like bufio.Scanner's: the first failed read records
// the error and every later read returns a zero value without moving, so
// a caller reads a whole structure straight through and checks err once.
// The error is the one the first failed read met, at the byte it met it.
type decoder struct {
	b   []byte
	pos int
	err error // the first error; reads after it return zero values
}

var errShort = errors.New("msgpack: unexpected end of payload")

// failf records an error at the current byte unless one is recorded.
func (d *decoder) failf(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("msgpack at payload byte %d: %s", d.pos, fmt.Sprintf(format, args...))
	}
}

// short records errShort unless an error is recorded.
func (d *decoder) short() {
	if d.err == nil {
		d.err = errShort
	}
}

// left is the number of payload bytes not yet read.
func (d *decoder) left() uint64 { return uint64(len(d.b) - d.pos) }

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.pos {
		d.short()
		return nil
	}
	p := d.b[d.pos : d.pos+n]
	d.pos += n
	return p
}

// code consumes one byte; ok is false after an error.
func (d *decoder) code() (c byte, ok bool) {
	if d.err != nil {
		return 0, false
	}
	if d.pos >= len(d.b) {
		d.short()
		return 0, false
	}
	c = d.b[d.pos]
	d.pos++
	return c, true
}

// unread gives back the code just consumed, so that an error points at it.
func (d *decoder) unread() { d.pos-- }

// be reads an n-byte big-endian unsigned integer.
func (d *decoder) be(n int) uint64 {
	var v uint64
	for _, c := range d.take(n) {
		v = v<<8 | uint64(c)
	}
	return v
}

// integer reads any msgpack integer. neg reports a negative value held in
// v as two's complement.
func (d *decoder) integer() (v uint64, neg bool) {
	c, ok := d.code()
	switch {
	case !ok:
		return 0, false
	case c <= 0x7f:
		return uint64(c), false
	case c >= 0xe0:
		return uint64(int64(int8(c))), true
	case c >= 0xcc && c <= 0xcf: // uint 8/16/32/64
		return d.be(1 << (c - 0xcc)), false
	case c >= 0xd0 && c <= 0xd3: // int 8/16/32/64
		n := 1 << (c - 0xd0)
		shift := 64 - 8*n
		s := int64(d.be(n)<<shift) >> shift
		return uint64(s), s < 0
	}
	d.unread()
	d.failf("want an integer, found code 0x%02x", c)
	return 0, false
}

func (d *decoder) uint() uint64 {
	v, neg := d.integer()
	if neg {
		d.failf("negative value where an unsigned one belongs")
		return 0
	}
	return v
}

func (d *decoder) int() int64 {
	v, neg := d.integer()
	if !neg && v > math.MaxInt64 {
		d.failf("integer %d overflows int64", v)
		return 0
	}
	return int64(v)
}

// small reads an unsigned integer of at most limit.
func (d *decoder) small(limit uint64) int {
	v := d.uint()
	if v > limit {
		d.failf("value %d exceeds %d", v, limit)
		return 0
	}
	return int(v)
}

func (d *decoder) smallInt() int { return int(d.int()) }

func (d *decoder) boolean() bool {
	c, ok := d.code()
	switch {
	case !ok:
		return false
	case c == 0xc2:
		return false
	case c == 0xc3:
		return true
	}
	d.unread()
	d.failf("want a bool, found code 0x%02x", c)
	return false
}

// isNil consumes a nil and reports whether there was one. It records no
// error: at the end of the payload the next read does.
func (d *decoder) isNil() bool {
	if d.err == nil && d.pos < len(d.b) && d.b[d.pos] == 0xc0 {
		d.pos++
		return true
	}
	return false
}

// rawBytes reads a str or bin (or nil, as empty) and returns a slice of
// the payload.
func (d *decoder) rawBytes() []byte {
	c, ok := d.code()
	var n uint64
	switch {
	case !ok, c == 0xc0:
		return nil
	case c >= 0xa0 && c <= 0xbf:
		n = uint64(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n = d.be(1)
	case c == 0xda || c == 0xc5:
		n = d.be(2)
	case c == 0xdb || c == 0xc6:
		n = d.be(4)
	default:
		d.unread()
		d.failf("want a string, found code 0x%02x", c)
		return nil
	}
	if n > d.left() {
		d.short()
		return nil
	}
	return d.take(int(n))
}

func (d *decoder) str() string { return string(d.rawBytes()) }

func (d *decoder) bin() []byte {
	p := d.rawBytes()
	if len(p) == 0 {
		return nil
	}
	return bytes.Clone(p)
}

// arr reads an array length (-1 for nil). Every element takes at least
// one byte, so a length beyond the bytes left is an error, not an
// allocation.
func (d *decoder) arr() int {
	c, ok := d.code()
	var n uint64
	switch {
	case !ok:
		return 0
	case c == 0xc0:
		return -1
	case c >= 0x90 && c <= 0x9f:
		n = uint64(c & 0x0f)
	case c == 0xdc:
		n = d.be(2)
	case c == 0xdd:
		n = d.be(4)
	default:
		d.unread()
		d.failf("want an array, found code 0x%02x", c)
		return 0
	}
	if n > d.left() {
		d.short()
		return 0
	}
	return int(n)
}

// fixed reads an array of at least want elements and returns how many
// more it holds (for skipN).
func (d *decoder) fixed(want int, what string) (extra int) {
	n := d.arr()
	if d.err != nil {
		return 0
	}
	if n < want {
		d.failf("%s has %d fields, want at least %d", what, n, want)
		return 0
	}
	return n - want
}

// more reports whether an array read with fixed holds another of the
// fields its version may lack, and counts it off extra.
func more(extra *int, n int) bool {
	if *extra < n {
		return false
	}
	*extra -= n
	return true
}

// skipN skips n values: the fields a newer writer appended.
func (d *decoder) skipN(n int) {
	for range n {
		if d.err != nil {
			return
		}
		d.skip(0)
	}
}

func (d *decoder) time() time.Time {
	if d.isNil() {
		return time.Time{}
	}
	ns := d.int()
	if d.err != nil {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// end checks that the value read was the whole payload.
func (d *decoder) end() {
	if d.pos != len(d.b) {
		d.failf("%d bytes after the value", len(d.b)-d.pos)
	}
}

const maxDepth = 32

// class is what a msgpack code begins, after the format table of the
// msgpack specification; skip needs no more than this.
type class uint8

const (
	classInvalid class = iota // 0xc1, "never used"
	classSingle               // the code is the value: fixint, nil, bool
	classInt                  // uint and int 8/16/32/64
	classRaw                  // str and bin
	classArray                // fixarray, array 16/32
	classFixMap               // the code holds the number of pairs
	classMap                  // map 16/32
	classFloat                // float 32/64
	classFixExt               // fixext 1/2/4/8/16
	classExt                  // ext 8/16/32
)

// classes maps every code to its class.
var classes = func() (t [256]class) {
	set := func(from, to int, c class) {
		for i := from; i <= to; i++ {
			t[i] = c
		}
	}
	set(0x00, 0x7f, classSingle)
	set(0x80, 0x8f, classFixMap)
	set(0x90, 0x9f, classArray)
	set(0xa0, 0xbf, classRaw)
	set(0xc0, 0xc0, classSingle)
	set(0xc2, 0xc3, classSingle)
	set(0xc4, 0xc6, classRaw)
	set(0xc7, 0xc9, classExt)
	set(0xca, 0xcb, classFloat)
	set(0xcc, 0xd3, classInt)
	set(0xd4, 0xd8, classFixExt)
	set(0xd9, 0xdb, classRaw)
	set(0xdc, 0xdd, classArray)
	set(0xde, 0xdf, classMap)
	set(0xe0, 0xff, classSingle)
	return t
}()

// skip skips one value of any msgpack type.
func (d *decoder) skip(depth int) {
	if depth > maxDepth {
		d.failf("values nested deeper than %d", maxDepth)
		return
	}
	if d.err == nil && d.pos >= len(d.b) {
		d.short()
	}
	if d.err != nil {
		return
	}
	items := d.head(d.b[d.pos])
	if d.err == nil && items > d.left() {
		d.short()
	}
	for range items {
		if d.err != nil {
			return
		}
		d.skip(depth + 1)
	}
}

// head skips what a value's code c begins: the code, its length and its
// bytes. It returns how many values are nested in it (the elements of an
// array, the keys and values of a map).
func (d *decoder) head(c byte) (items uint64) {
	switch classes[c] {
	case classSingle:
		d.pos++
	case classInt:
		d.integer()
	case classRaw:
		d.rawBytes()
	case classArray:
		return uint64(max(d.arr(), 0))
	case classFixMap:
		d.pos++
		return 2 * uint64(c&0x0f)
	case classMap:
		d.pos++
		return 2 * d.be(2<<(c-0xde))
	case classFloat:
		d.pos++
		d.opaque(4 << (c - 0xca))
	case classFixExt:
		d.pos++
		d.opaque(1 + 1<<(c-0xd4))
	case classExt:
		d.pos++
		d.opaque(1 + d.be(1<<(c-0xc7)))
	default:
		d.failf("invalid code 0x%02x", c)
	}
	return 0
}

// opaque skips n bytes whose meaning the format does not need.
func (d *decoder) opaque(n uint64) {
	if d.err != nil {
		return
	}
	if n > d.left() {
		d.short()
		return
	}
	d.pos += int(n)
}

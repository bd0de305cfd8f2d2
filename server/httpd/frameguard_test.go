package httpd

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"testing/iotest"
)

// frame builds a masked client frame header announcing length bytes, and the
// payload when it is small.
func frame(length uint64, payload bool) []byte {
	b := []byte{0x81}
	switch {
	case length < 126:
		b = append(b, 0x80|byte(length))
	case length <= 0xffff:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(length))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, length)
	}
	b = append(b, 1, 2, 3, 4) // mask key
	if payload {
		b = append(b, bytes.Repeat([]byte{'x'}, int(length))...)
	}
	return b
}

// The guard passes frames up to its limit, whatever sizes the reads come in,
// and fails at the first header announcing more.
func TestFrameGuard(t *testing.T) {
	var ok []byte
	for _, n := range []uint64{0, 5, 125, 126, 300, 65535, 65536, 100_000} {
		ok = append(ok, frame(n, true)...)
	}
	for _, name := range []string{"whole", "one byte at a time"} {
		r := io.Reader(bytes.NewReader(ok))
		if name != "whole" {
			r = iotest.OneByteReader(r)
		}
		got, err := io.ReadAll(&frameGuard{r: r, limit: 100_000})
		if err != nil || !bytes.Equal(got, ok) {
			t.Fatalf("%s: frames within the limit: %d of %d bytes, %v", name, len(got), len(ok), err)
		}
	}
	for _, n := range []uint64{100_001, 1<<63 - 1, 1 << 63, 1<<64 - 1} {
		in := append(frame(5, true), frame(n, false)...)
		_, err := io.ReadAll(&frameGuard{r: iotest.OneByteReader(bytes.NewReader(in)), limit: 100_000})
		if err == nil {
			t.Errorf("a header announcing %d bytes passed a 100,000-byte limit", n)
		}
	}
}

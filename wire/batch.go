package wire

import (
	"bytes"
	"io"
	"iter"
)

// A WebSocket text message carries one frame or several, one per line: frames
// are separated by a single '\n' (newline-delimited JSON). EncodeFrame never
// emits a raw newline, so the split is unambiguous; empty lines are ignored.
// Readers take both forms, since a one-frame message is just a message with one
// line (docs/protocol.md).

// FrameSeparator separates the frames of one WebSocket message.
const FrameSeparator = '\n'

// CutFrame returns the first frame of msg and what follows its separator. Empty
// lines (nothing but JSON whitespace) are skipped; ok is false when msg holds no
// more frames. The frame is returned as it stands, not decoded: a line that is
// not a valid frame fails in DecodeFrame on its own and the caller goes on with
// rest.
func CutFrame(msg []byte) (frame, rest []byte, ok bool) {
	for len(msg) > 0 {
		frame, rest = msg, nil
		if i := bytes.IndexByte(msg, FrameSeparator); i >= 0 {
			frame, rest = msg[:i], msg[i+1:]
		}
		if !blank(frame) {
			return frame, rest, true
		}
		msg = rest
	}
	return nil, nil, false
}

// Frames iterates over the frames of one message, in order (see CutFrame).
func Frames(msg []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for {
			frame, rest, ok := CutFrame(msg)
			if !ok || !yield(frame) {
				return
			}
			msg = rest
		}
	}
}

// AppendFrame appends an encoded frame to msg, a message being built, with a
// separator when msg already holds a frame. The frame must come from
// EncodeFrame (one line, not empty).
func AppendFrame(msg, frame []byte) []byte {
	if len(msg) > 0 {
		msg = append(msg, FrameSeparator)
	}
	return append(msg, frame...)
}

// blank reports whether line holds nothing but JSON whitespace.
func blank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// ReadMessage reads r — one WebSocket message — to its end into buf's storage,
// growing it as needed: a reader that keeps the buffer reads every message
// without allocating. Frames decoded from it copy what they keep, so the
// buffer may be reused once its frames are decoded.
func ReadMessage(r io.Reader, buf []byte) ([]byte, error) {
	if cap(buf) == 0 {
		buf = make([]byte, 0, 512)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

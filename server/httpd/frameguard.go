package httpd

import (
	"encoding/binary"
	"fmt"
	"io"
)

// frameGuard reads a client's WebSocket byte stream as coder/websocket does
// and fails the read at a frame header announcing more than limit bytes.
// coder/websocket checks its read limit (SetReadLimit) only as payload
// arrives: a header announcing 2^63-1 bytes followed by nothing was neither
// answered nor closed, and held its socket for as long as the peer liked. A
// frame that big can only belong to a message over the limit, so failing at
// its header refuses nothing the limit would let through.
type frameGuard struct {
	r     io.Reader
	limit uint64

	hdr  [14]byte // the header being read: at most 2 + 8 length + 4 mask bytes
	have int      // bytes of hdr read so far
	left uint64   // payload bytes of the current frame still to pass
	err  error
}

func (g *frameGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for b := p[:n]; len(b) > 0; {
		if g.left > 0 {
			k := min(uint64(len(b)), g.left)
			g.left -= k
			b = b[k:]
			continue
		}
		g.hdr[g.have] = b[0]
		g.have++
		b = b[1:]
		if g.have < 2 {
			continue
		}
		size := 2
		switch g.hdr[1] & 0x7f {
		case 126:
			size += 2
		case 127:
			size += 8
		}
		if g.hdr[1]&0x80 != 0 {
			size += 4 // the mask key
		}
		if g.have < size {
			continue
		}
		var length uint64
		switch l := g.hdr[1] & 0x7f; l {
		case 126:
			length = uint64(binary.BigEndian.Uint16(g.hdr[2:4]))
		case 127:
			length = binary.BigEndian.Uint64(g.hdr[2:10])
		default:
			length = uint64(l)
		}
		if length > g.limit {
			// The socket's read loop ends at the error and the socket is
			// closed; what else this read held goes with it.
			g.err = fmt.Errorf("websocket frame of %d bytes announced, over the %d-byte limit", length, g.limit)
			return 0, g.err
		}
		g.have, g.left = 0, length
	}
	return n, err
}

package httpd_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// clientFrame is one masked text frame, as a client sends it (RFC 6455 §5.2).
func clientFrame(payload []byte) []byte {
	mask := [4]byte{0x12, 0x34, 0x56, 0x78}
	out := []byte{0x81} // FIN, text
	switch n := len(payload); {
	case n < 126:
		out = append(out, 0x80|byte(n))
	default:
		out = append(out, 0x80|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	}
	out = append(out, mask[:]...)
	for i, b := range payload {
		out = append(out, b^mask[i%4])
	}
	return out
}

// readServerFrame reads one unmasked server frame and returns its payload.
func readServerFrame(r io.Reader) ([]byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(r, ext[:]); err != nil {
			return nil, err
		}
		n = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(r, ext[:]); err != nil {
			return nil, err
		}
		n = binary.BigEndian.Uint64(ext[:])
	}
	payload := make([]byte, n)
	_, err := io.ReadFull(r, payload)
	if h[0]&0x0f == 0x8 {
		return nil, fmt.Errorf("server closed the socket: %q", payload)
	}
	return payload, err
}

// A client may send its first frame right behind the upgrade request, before
// the 101 answer (the bytes then sit in net/http's buffer when the connection
// is taken over): the server must read that frame whole, not from its middle.
// Before the fix this closed the socket with "unexpected rsv bits" (seen as a
// rare failure of the two-node tests, whose first frame follows the dial).
func TestFrameSentWithTheUpgradeRequest(t *testing.T) {
	srv := servertest.Start(t)
	token := register(t, srv.URL, "alice")
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))

	ping, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypePing, ID: "early"})
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET /v1/ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer %s\r\n\r\n",
		conn.RemoteAddr(), token)
	req.Write(clientFrame(ping))
	if _, err := conn.Write(req.Bytes()); err != nil { // one write: request and frame together
		t.Fatal(err)
	}

	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade answered %s", resp.Status)
	}
	for {
		payload, err := readServerFrame(br)
		if err != nil {
			t.Fatalf("waiting for the pong to the frame sent with the upgrade: %v", err)
		}
		for line := range wire.Frames(payload) {
			if f, err := wire.DecodeFrame(line); err == nil && f.Type == wire.TypePong && f.ID == "early" {
				return
			}
		}
	}
}

package client_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// filterOut relays what the client sends, and when watchOut is set, hands it
// each WebSocket frame's payload, unmasked, before the frame goes on: what
// the watcher checks holds at the moment the client sent it.
func (p *proxy) filterOut(w io.Writer, r io.Reader) error {
	p.mu.Lock()
	watch := p.watchOut
	p.mu.Unlock()
	if watch == nil {
		_, err := io.Copy(w, r)
		return err
	}
	br := bufio.NewReader(r)
	upgrade := false
	for {
		line, err := br.ReadString('\n')
		if _, werr := io.WriteString(w, line); err != nil || werr != nil {
			return err
		}
		upgrade = upgrade || strings.EqualFold(strings.TrimSpace(line), "Upgrade: websocket")
		if line == "\r\n" {
			break
		}
	}
	if !upgrade {
		_, err := io.Copy(w, br)
		return err
	}
	for {
		var hdr [14]byte
		if _, err := io.ReadFull(br, hdr[:2]); err != nil {
			return err
		}
		n, h := int(hdr[1]&0x7f), 2
		switch n {
		case 126:
			if _, err := io.ReadFull(br, hdr[2:4]); err != nil {
				return err
			}
			n, h = int(binary.BigEndian.Uint16(hdr[2:4])), 4
		case 127:
			if _, err := io.ReadFull(br, hdr[2:10]); err != nil {
				return err
			}
			n, h = int(binary.BigEndian.Uint64(hdr[2:10])), 10
		}
		if hdr[1]&0x80 == 0 || n < 0 || n > 1<<24 {
			return fmt.Errorf("proxy: an unmasked or %d-byte client frame is not what this test expects", n)
		}
		if _, err := io.ReadFull(br, hdr[h:h+4]); err != nil {
			return err
		}
		mask := hdr[h : h+4]
		h += 4
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return err
		}
		plain := make([]byte, n)
		for i, b := range payload {
			plain[i] = b ^ mask[i%4]
		}
		if hdr[0]&0x0f == 1 || hdr[0]&0x0f == 2 { // text or binary
			watch(plain)
		}
		if _, err := w.Write(append(hdr[:h:h], payload...)); err != nil {
			return err
		}
	}
}

func (p *proxy) setWatchOut(watch func(payload []byte)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watchOut = watch
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/wire"
)

var httpClient = &http.Client{Timeout: 10 * time.Second}

// call makes one API request; a *wire.Error when the server answered with one.
func call(ctx context.Context, method, url, token string, body, out any) (int, error) {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error *wire.Error `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != nil {
			return resp.StatusCode, e.Error
		}
		return resp.StatusCode, fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w", method, url, err)
		}
	}
	return resp.StatusCode, nil
}

// acked is a send the server acknowledged.
type acked struct {
	conv, id, sender string
	seq              int64
	index            int // the sender's n-th send into conv
	at               time.Time
}

// ledger collects what senders had acknowledged and devices received.
type ledger struct {
	mu    sync.Mutex
	acks  []acked
	retry int            // sends answered with an error and sent again
	codes map[string]int // those errors by code ("network" when no answer came)
	unack []string
}

func (l *ledger) ack(a acked) {
	l.mu.Lock()
	l.acks = append(l.acks, a)
	l.mu.Unlock()
}

// sender sends to its conversations in turn, one message at a time, each until
// the server acknowledges it: on an error it waits for the retry hint (or a
// moment) and sends the same message_id again, to the next node when the one
// it used does not answer, as `chat send` and the outbox do.
type sender struct {
	user, token string
	convs       []string
	nodes       []*node
	every       time.Duration
	led         *ledger
}

func (s *sender) run(ctx, drain context.Context) {
	node := rand.IntN(len(s.nodes))
	count := map[string]int{}
	for n := 0; ctx.Err() == nil; n++ {
		conv := s.convs[n%len(s.convs)]
		count[conv]++
		id := fmt.Sprintf("%s-%d", s.user, n)
		for {
			var resp wire.SendResponse
			_, err := call(drain, http.MethodPost, s.nodes[node].url()+"/v1/conversations/"+conv+"/messages", s.token,
				wire.SendRequest{MessageID: id, Content: fmt.Sprintf("%s #%d", s.user, n)}, &resp)
			if err == nil {
				s.led.ack(acked{conv: conv, id: id, sender: s.user, seq: resp.SeqNo, index: count[conv], at: time.Now()})
				break
			}
			if drain.Err() != nil {
				s.led.mu.Lock()
				s.led.unack = append(s.led.unack, id)
				s.led.mu.Unlock()
				return
			}
			wait := 200 * time.Millisecond
			var we *wire.Error
			code := "network"
			if errors.As(err, &we) {
				code = string(we.Code)
			}
			s.led.mu.Lock()
			s.led.retry++
			if s.led.codes == nil {
				s.led.codes = map[string]int{}
			}
			s.led.codes[code]++
			s.led.mu.Unlock()
			if we != nil {
				wait = max(wait, we.RetryAfter())
			} else {
				node = (node + 1) % len(s.nodes) // not answering: try another node
			}
			select {
			case <-time.After(wait):
			case <-drain.Done():
			}
		}
		select {
		case <-time.After(s.every):
		case <-ctx.Done():
		}
	}
}

// received is one message as a device first stored it.
type received struct {
	id string
	at time.Time
}

// device is one WebSocket client of a user, as the TUI keeps one: it stores
// messages by (conversation, seq_no), acks the highest seq_no it holds without
// a gap, and syncs from there when it (re)connects and when it sees a gap, as
// every client does. It reconnects to its node, or the next one while that one
// is down.
type device struct {
	name, user, token string
	convs             []string
	nodes             []*node
	home              int

	mu       sync.Mutex
	got      map[string]map[int64]received // conversation → seq → first copy
	have     map[string]int64              // conversation → highest seq held without a gap
	copies   int                           // copies of a message it already held
	connects int
}

func newDevice(name, user, token string, convs []string, nodes []*node, home int) *device {
	d := &device{name: name, user: user, token: token, convs: convs, nodes: nodes, home: home,
		got: map[string]map[int64]received{}, have: map[string]int64{}}
	for _, c := range convs {
		d.got[c] = map[int64]received{}
	}
	return d
}

func (d *device) run(ctx context.Context) {
	at := d.home
	for ctx.Err() == nil {
		err := d.session(ctx, d.nodes[at])
		if ctx.Err() != nil {
			return
		}
		if err != nil && !strings.Contains(err.Error(), "status = StatusGoingAway") {
			at = (at + 1) % len(d.nodes) // that node did not take us: the next one
			if rand.IntN(2) == 0 {
				at = d.home // and back home once it is up again
			}
		}
		select {
		case <-time.After(100*time.Millisecond + rand.N(200*time.Millisecond)):
		case <-ctx.Done():
		}
	}
}

// session is one connection: sync, then store and ack what comes.
func (d *device) session(ctx context.Context, n *node) error {
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	ws, _, err := websocket.Dial(dctx, strings.Replace(n.url(), "http", "ws", 1)+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + d.token}}})
	cancel()
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	ws.SetReadLimit(-1)
	d.mu.Lock()
	d.connects++
	cursors := make([]wire.Cursor, 0, len(d.convs))
	for _, c := range d.convs {
		cursors = append(cursors, wire.Cursor{ConversationID: c, SeqNo: d.have[c]})
	}
	d.mu.Unlock()
	if err := d.write(ctx, ws, wire.Frame{Type: wire.TypeSync, ID: "connect", Cursors: cursors}); err != nil {
		return err
	}
	syncing := map[string]gapSync{} // the gap each conversation was synced for
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return err
		}
		for line := range wire.Frames(data) {
			f, err := wire.DecodeFrame(line)
			if err != nil || f.Type != wire.TypeMessage || f.Message == nil {
				continue
			}
			conv, have, top, fresh := d.store(f.Message)
			if fresh && top == f.Message.SeqNo {
				if err := d.write(ctx, ws, wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: top}); err != nil {
					return err
				}
			}
			// A gap may be a message lost on the way or a seq_no no message took
			// (a failed write): a sync from the last seq_no held without a gap
			// tells, and brings what was lost. A few tries per gap, not forever.
			if have < top {
				g := syncing[conv]
				if g.from != have {
					g = gapSync{from: have}
				}
				if g.tries < 3 && time.Since(g.last) > time.Second {
					g.tries++
					g.last = time.Now()
					if err := d.write(ctx, ws, wire.Frame{Type: wire.TypeSync, ID: "gap-" + conv,
						Cursors: []wire.Cursor{{ConversationID: conv, SeqNo: have}}}); err != nil {
						return err
					}
				}
				syncing[conv] = g
			}
		}
	}
}

func (d *device) write(ctx context.Context, ws *websocket.Conn, f wire.Frame) error {
	data, err := wire.EncodeFrame(f)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return ws.Write(wctx, websocket.MessageText, data)
}

type gapSync struct {
	from  int64 // the seq_no held without a gap when the sync was asked for
	tries int
	last  time.Time
}

// store keeps m. It says the highest seq_no held without a gap and the highest
// held, and whether m was new. The device acks the highest it holds: the ack is
// what it has stored, and a gap that is a seq_no never used would otherwise
// hold its acks back for good.
func (d *device) store(m *wire.Message) (conv string, have, top int64, fresh bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	conv = m.ConversationID
	seqs := d.got[conv]
	if seqs == nil {
		seqs = map[int64]received{}
		d.got[conv] = seqs
	}
	if _, dup := seqs[m.SeqNo]; dup {
		d.copies++
	} else {
		seqs[m.SeqNo] = received{id: m.MessageID, at: time.Now()}
		fresh = true
	}
	have = d.have[conv]
	for {
		if _, ok := seqs[have+1]; !ok {
			break
		}
		have++
	}
	d.have[conv] = have
	for s := range seqs {
		top = max(top, s)
	}
	return conv, have, top, fresh
}

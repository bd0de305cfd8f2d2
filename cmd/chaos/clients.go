package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
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

// last is when the last send was acknowledged (zero: none was).
func (l *ledger) last() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var t time.Time
	for _, a := range l.acks {
		if a.at.After(t) {
			t = a.at
		}
	}
	return t
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

// device is one WebSocket client of a user, acking and syncing as the real
// client (package client) does: it stores messages by (conversation, seq_no)
// and acks its cursor, the highest seq_no below which it holds everything or
// knows nothing exists. It syncs from its cursors when it (re)connects and when
// a message shows it a gap; a complete sync ("synced" without more) means
// whatever it lacks below its newest message does not exist (a seq_no no
// message took), so the cursor passes it once it has lasted HoleWait (it may
// be a write still in flight); a sync the server could not serve
// (an error, then "synced" with more) is asked again after the retry hint. It
// reconnects to its node, or the next one while that one is down.
type device struct {
	name, user, token string
	convs             []string
	nodes             []*node
	home              int

	mu       sync.Mutex
	got      map[string]map[int64]received // conversation → seq → first copy
	cursor   map[string]int64              // conversation → the cursor
	copies   int                           // copies of a message it already held
	connects int
	skipped  int // seq_nos a complete sync showed to be unused
}

func newDevice(name, user, token string, convs []string, nodes []*node, home int) *device {
	d := &device{name: name, user: user, token: token, convs: convs, nodes: nodes, home: home,
		got: map[string]map[int64]received{}, cursor: map[string]int64{}}
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

// link is one connection's sync state, as the client keeps it per connection.
type link struct {
	ws     *websocket.Conn
	acked  map[string]int64 // the last ack sent per conversation
	rounds int
	round  map[string]int64 // the round in flight: conversations and their cursors when asked (nil: none)
	syncID string
	retry  time.Duration    // the longest retry hint of the round's errors
	gapped map[string]bool  // conversations to sync once the round ends
	resync <-chan time.Time // when to ask a failed round again
	// holes: conversations a complete sync left with a gap below the newest
	// message held (cursor and when first seen); passed after holeWait.
	holes     map[string]hole
	holeCheck <-chan time.Time
}

type hole struct {
	cursor int64
	since  time.Time
}

// holeWait is the client's default HoleWait: a gap may be a write in flight.
const holeWait = 10 * time.Second

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
	d.mu.Unlock()
	l := &link{ws: ws, acked: map[string]int64{}, gapped: map[string]bool{}, holes: map[string]hole{}}
	if err := d.startRound(ctx, l, d.convs); err != nil {
		return err
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	type read struct {
		data []byte
		err  error
	}
	reads := make(chan read, 16)
	go func() { // always reading, as coder/websocket wants
		for {
			_, data, err := ws.Read(rctx)
			select {
			case reads <- read{data, err}:
			case <-rctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case r := <-reads:
			if r.err != nil {
				return r.err
			}
			if err := d.handle(ctx, l, r.data); err != nil {
				return err
			}
		case <-l.holeCheck:
			l.holeCheck = nil
			for c := range l.holes {
				l.gapped[c] = true
			}
			if l.round == nil {
				convs := slices.Collect(maps.Keys(l.gapped))
				l.gapped = map[string]bool{}
				if err := d.startRound(ctx, l, convs); err != nil {
					return err
				}
			}
		case <-l.resync:
			l.resync = nil
			if err := d.startRound(ctx, l, slices.Collect(maps.Keys(l.round))); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// startRound asks for everything after the cursors of convs.
func (d *device) startRound(ctx context.Context, l *link, convs []string) error {
	l.rounds++
	l.syncID, l.retry, l.round = fmt.Sprintf("sync-%d", l.rounds), 0, map[string]int64{}
	cursors := make([]wire.Cursor, 0, len(convs))
	d.mu.Lock()
	for _, c := range convs {
		l.round[c] = d.cursor[c]
		cursors = append(cursors, wire.Cursor{ConversationID: c, SeqNo: d.cursor[c]})
	}
	d.mu.Unlock()
	return d.write(ctx, l.ws, wire.Frame{Type: wire.TypeSync, ID: l.syncID, Cursors: cursors})
}

// handle applies one WebSocket message's frames in order.
func (d *device) handle(ctx context.Context, l *link, data []byte) error {
	touched := map[string]int64{}
	for line := range wire.Frames(data) {
		f, err := wire.DecodeFrame(line)
		if err != nil {
			continue
		}
		switch {
		case f.Type == wire.TypeMessage && f.Message != nil:
			d.store(f.Message)
			touched[f.Message.ConversationID] = max(touched[f.Message.ConversationID], f.Message.SeqNo)
		case f.Type == wire.TypeError && f.ID == l.syncID && l.round != nil:
			if f.Error != nil && f.Error.Code.Retryable() {
				l.retry = max(l.retry, f.Error.RetryAfter(), 100*time.Millisecond)
			}
		case f.Type == wire.TypeSynced && f.ID == l.syncID && l.round != nil:
			if err := d.synced(ctx, l, f.More); err != nil {
				return err
			}
		case f.Type == wire.TypeResync:
			// The server may have lost live copies to us: sync everything, as
			// the real client does (docs/protocol.md).
			for _, c := range d.convs {
				l.gapped[c] = true
			}
		}
	}
	for conv, top := range touched {
		if err := d.ack(ctx, l, conv); err != nil {
			return err
		}
		if _, inRound := l.round[conv]; inRound {
			continue
		}
		d.mu.Lock()
		gap := d.cursor[conv] < top
		d.mu.Unlock()
		if gap {
			l.gapped[conv] = true
		}
	}
	if len(l.gapped) > 0 && l.round == nil {
		convs := slices.Collect(maps.Keys(l.gapped))
		l.gapped = map[string]bool{}
		return d.startRound(ctx, l, convs)
	}
	return nil
}

// synced ends the round in flight.
func (d *device) synced(ctx context.Context, l *link, more bool) error {
	round := l.round
	if more {
		progress := false
		d.mu.Lock()
		for c, was := range round {
			progress = progress || d.cursor[c] > was
		}
		d.mu.Unlock()
		switch {
		case progress:
			return d.startRound(ctx, l, slices.Collect(maps.Keys(round)))
		case l.retry > 0:
			l.resync = time.After(l.retry) // the round stays open until then
		default:
			l.round = nil // a hole the server cannot get past: the next connect
		}
		return nil
	}
	l.round = nil
	now := time.Now()
	d.mu.Lock()
	for c := range round {
		top := d.cursor[c]
		for s := range d.got[c] {
			top = max(top, s)
		}
		if top > d.cursor[c] {
			h, seen := l.holes[c]
			if !seen || h.cursor != d.cursor[c] {
				h = hole{cursor: d.cursor[c], since: now}
				l.holes[c] = h
			}
			if wait := h.since.Add(holeWait).Sub(now); wait > 0 {
				if l.holeCheck == nil {
					l.holeCheck = time.After(wait)
				}
				continue
			}
			for s := d.cursor[c] + 1; s < top; s++ {
				if _, ok := d.got[c][s]; !ok {
					d.skipped++
				}
			}
		}
		delete(l.holes, c)
		d.cursor[c] = top
	}
	d.mu.Unlock()
	for c := range round {
		if err := d.ack(ctx, l, c); err != nil {
			return err
		}
	}
	return nil
}

// ack tells the server a conversation is stored up to the cursor, unless this
// connection said so already.
func (d *device) ack(ctx context.Context, l *link, conv string) error {
	d.mu.Lock()
	cur := d.cursor[conv]
	d.mu.Unlock()
	if cur <= l.acked[conv] {
		return nil
	}
	l.acked[conv] = cur
	return d.write(ctx, l.ws, wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: cur})
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

// store keeps m and moves the cursor over what is now held without a gap.
func (d *device) store(m *wire.Message) {
	d.mu.Lock()
	defer d.mu.Unlock()
	conv := m.ConversationID
	seqs := d.got[conv]
	if seqs == nil {
		seqs = map[int64]received{}
		d.got[conv] = seqs
	}
	if _, dup := seqs[m.SeqNo]; dup {
		d.copies++
		return
	}
	seqs[m.SeqNo] = received{id: m.MessageID, at: time.Now()}
	cur := d.cursor[conv]
	for {
		if _, ok := seqs[cur+1]; !ok {
			break
		}
		cur++
	}
	d.cursor[conv] = cur
}

package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/chatterm/chat/wire"
)

// hist is an HDR histogram of microseconds, sharded so that many readers record
// without contending on one lock.
type hist struct {
	shards [16]struct {
		mu sync.Mutex
		h  *hdrhistogram.Histogram
	}
}

func newHist() *hist {
	h := &hist{}
	for i := range h.shards {
		h.shards[i].h = hdrhistogram.New(1, 120_000_000, 3) // 1 µs to 2 min, 3 digits
	}
	return h
}

func (h *hist) record(shard int, d time.Duration) {
	s := &h.shards[shard%len(h.shards)]
	us := max(d.Microseconds(), 1)
	s.mu.Lock()
	s.h.RecordValue(min(us, 120_000_000))
	s.mu.Unlock()
}

// Percentiles are in milliseconds.
type Percentiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99_9_ms"`
	Max   float64 `json:"max_ms"`
}

func (h *hist) percentiles() Percentiles {
	all := hdrhistogram.New(1, 120_000_000, 3)
	for i := range h.shards {
		s := &h.shards[i]
		s.mu.Lock()
		all.Merge(s.h)
		s.mu.Unlock()
	}
	ms := func(q float64) float64 { return float64(all.ValueAtQuantile(q)) / 1000 }
	return Percentiles{Count: all.TotalCount(), P50: ms(50), P95: ms(95), P99: ms(99), P999: ms(99.9), Max: float64(all.Max()) / 1000}
}

// peer is one simulated user: a socket, the conversation it sends into, and its
// view of what it received.
type peer struct {
	idx        int
	user       string
	token      string
	conn       *wsConn
	conv       string
	sends      bool
	recipients int64 // connections each of its messages reaches

	slots   chan struct{} // the window of in-flight sends
	lastSeq map[string]int64
	seen    map[string]*seqSet // per conversation, the seq_nos this connection received

	ackMu   sync.Mutex
	ackSeq  int64
	ackConv string
	unacked int64
	reack   bool                  // the last ack was refused: send it again
	ackFrom time.Time             // when the oldest message not yet acked came
	sentAck map[string]*ackRecord // per conversation, the acks handed to the socket

	// Sends not yet answered, by frame id, to resend after an overloaded answer
	// (as the real client does: client.Session retries after the hint).
	inflightMu sync.Mutex
	inflight   map[string][]byte
	lastID     int64 // frame ids are send times in ns, made unique per peer
}

// nextID returns a frame id for a send: its send time, unique per peer.
func (p *peer) nextID() string {
	id := time.Now().UnixNano()
	if id <= p.lastID {
		id = p.lastID + 1
	}
	p.lastID = id
	return strconv.FormatInt(id, 10)
}

// track records a send until its answer.
func (p *peer) track(id string, frame []byte) {
	p.inflightMu.Lock()
	p.inflight[id] = frame
	p.inflightMu.Unlock()
}

// answered forgets the send id and returns its frame.
func (p *peer) answered(id string) []byte {
	p.inflightMu.Lock()
	defer p.inflightMu.Unlock()
	frame := p.inflight[id]
	delete(p.inflight, id)
	return frame
}

// seqSet is a set of seq_nos, one bit each.
type seqSet []uint64

func (s *seqSet) add(seq int64) {
	i := int(seq / 64)
	if i >= len(*s) {
		*s = append(*s, make([]uint64, i+1-len(*s))...)
	}
	(*s)[i] |= 1 << (seq % 64)
}

func (s seqSet) has(seq int64) bool {
	i := int(seq / 64)
	return i < len(s) && s[i]&(1<<(seq%64)) != 0
}

// ackSettle is how long an ack may take to reach the server and be applied
// there: a copy of a message arriving sooner after the ack that covered it may
// have crossed it (sent by a grace-period check that read the row before the
// ack), and is not held against the server.
const ackSettle = time.Second

// ackRecord is what a peer acked in one conversation: settled, the highest
// seq_no acked at least ackSettle ago, and the acks since, oldest first.
type ackRecord struct {
	settled int64
	recent  []ackMark
}

type ackMark struct {
	seq int64
	at  time.Time
}

// ackedBy returns the highest seq_no acked at least ackSettle before now,
// folding older marks into settled.
func (r *ackRecord) ackedBy(now time.Time) int64 {
	n := 0
	for _, m := range r.recent {
		if now.Sub(m.at) < ackSettle {
			break
		}
		r.settled = max(r.settled, m.seq)
		n++
	}
	r.recent = r.recent[n:]
	return r.settled
}

// noteAck records that p handed an ack of conv up to seq to the socket (or to
// a send that carries it). The caller holds p.ackMu.
func (p *peer) noteAck(conv string, seq int64, now time.Time) {
	if p.sentAck == nil {
		p.sentAck = map[string]*ackRecord{}
	}
	r := p.sentAck[conv]
	if r == nil {
		r = &ackRecord{}
		p.sentAck[conv] = r
	}
	if n := len(r.recent); n > 0 && r.recent[n-1].seq >= seq {
		return
	}
	r.recent = append(r.recent, ackMark{seq, now})
}

// ackedSettled returns the highest seq_no of conv p acked at least ackSettle
// before now.
func (p *peer) ackedSettled(conv string, now time.Time) int64 {
	p.ackMu.Lock()
	defer p.ackMu.Unlock()
	if r := p.sentAck[conv]; r != nil {
		return r.ackedBy(now)
	}
	return 0
}

// chatOpts shape one run of the message engine.
type chatOpts struct {
	window   int
	size     int           // content bytes
	duration time.Duration // how long senders send
	rate     float64       // total offered messages/s; 0: as fast as the window allows
	// ackInterval is how long a receiver's cumulative ack may wait, as the
	// real client's SessionConfig.AckDelay: it rides on the receiver's next send
	// into the conversation (ack_seq) if one comes sooner, else goes alone.
	// 0: an ack frame after every message; <0: never.
	ackInterval time.Duration
	batch       int // most frames a peer joins into one WebSocket message when several are ready; 0 or 1: one per message
}

// ChatResult is what a message run measured.
type ChatResult struct {
	Sent      int64 `json:"sent"`
	Stored    int64 `json:"stored"`
	Delivered int64 `json:"delivered"`
	Acked     int64 `json:"acked"`
	Expected  int64 `json:"expected_deliveries"`
	Errors    int64 `json:"errors"`
	Retried   int64 `json:"retried_after_hint,omitempty"` // sends and acks refused as overloaded and sent again
	Lost      int64 `json:"lost"`
	Disorder  int64 `json:"duplicated_or_reordered"` // a copy of a message acked (ackSettle before), or one out of order
	// Copies are messages received again before this connection acked them:
	// the server sends again what a connected receiver has not acked after its
	// grace period (at-least-once), and the client drops the copy. Not a fault,
	// but none are expected while acks come well within the grace period.
	Copies    int64       `json:"copies_of_unacked,omitempty"`
	Elapsed   float64     `json:"elapsed_s"`
	Rate      float64     `json:"messages_per_s"` // stored and delivered and (if acking) acked, per second
	DelivRate float64     `json:"deliveries_per_s"`
	Offered   float64     `json:"offered_per_s,omitempty"`
	Latency   Percentiles `json:"send_to_delivered"`
	StoreLat  Percentiles `json:"send_to_stored"`
	FirstErr  string      `json:"first_error,omitempty"`
	Earlier   int64       `json:"redelivered_from_earlier_runs,omitempty"`
}

// engine drives peers: senders send into their conversation within their window
// (or at a fixed rate), every peer reads, checks order and acks.
type engine struct {
	opts  chatOpts
	peers []*peer

	sent, stored, delivered, acked, expected, errs, disorder, copies, earlier, retried atomic.Int64
	closing                                                                            atomic.Bool
	lastDelivery                                                                       atomic.Int64 // unix ns
	firstErr                                                                           atomic.Value
	lat, storeLat                                                                      *hist
	pad                                                                                string
	nonce                                                                              string // makes message ids unique per run
}

func (e *engine) fail(err error) {
	e.errs.Add(1)
	e.firstErr.CompareAndSwap(nil, err.Error())
}

// run sends for opts.duration, then waits until everything sent is stored,
// delivered and acked (or a drain timeout), and reports.
func runChat(ctx context.Context, peers []*peer, opts chatOpts) ChatResult {
	e := &engine{opts: opts, peers: peers, lat: newHist(), storeLat: newHist()}
	e.pad = strings.Repeat("x", max(opts.size-20, 1))
	e.nonce = strconv.FormatInt(time.Now().UnixNano(), 36)
	senders := 0
	for _, p := range peers {
		p.slots = make(chan struct{}, opts.window)
		p.lastSeq = map[string]int64{}
		p.seen = map[string]*seqSet{}
		p.sentAck = nil
		p.inflight = map[string][]byte{}
		if p.sends {
			senders++
		}
	}
	rctx, cancelReaders := context.WithCancel(ctx)
	// The loops read and write with a context that is never cancelled (see
	// ioContext); ending rctx closes the sockets instead, which ends them too.
	// The conns are read once, here: the next scenario's connect writes p.conn,
	// and this function must not return while the closer may still run.
	conns := peersConns(peers)
	closed := make(chan struct{})
	stopClosing := context.AfterFunc(rctx, func() { defer close(closed); closeAll(conns) })
	defer func() {
		if !stopClosing() {
			<-closed
		}
	}()
	var readers sync.WaitGroup
	for _, p := range peers {
		readers.Go(func() { e.readLoop(rctx, p) })
	}
	stopAcks := make(chan struct{})
	acksDone := make(chan struct{})
	go func() { defer close(acksDone); e.ackLoop(rctx, stopAcks) }()

	start := time.Now()
	stop := make(chan struct{})
	var sendersWG sync.WaitGroup
	for _, p := range peers {
		if !p.sends {
			continue
		}
		sendersWG.Go(func() { e.sendLoop(rctx, p, stop, start, senders) })
	}
	select {
	case <-time.After(opts.duration):
	case <-ctx.Done():
	}
	close(stop)
	sendersWG.Wait()
	sendEnd := time.Now()

	// Drain: every send answered, every stored message delivered everywhere.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if e.stored.Load()+e.errs.Load() >= e.sent.Load() && e.delivered.Load() >= e.expected.Load() {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stopAcks)
	<-acksDone
	end := time.Unix(0, e.lastDelivery.Load())
	if end.Before(start) {
		end = sendEnd
	}
	// Close gracefully while the readers still read: an abrupt close with unread
	// frames would make the kernel reset the connection and drop the last acks
	// before the server reads them.
	e.closing.Store(true)
	closeGracefully(conns)
	cancelReaders()
	closeAll(conns)
	readers.Wait()

	r := ChatResult{Sent: e.sent.Load(), Stored: e.stored.Load(), Delivered: e.delivered.Load(), Acked: e.acked.Load(),
		Expected: e.expected.Load(), Errors: e.errs.Load(), Retried: e.retried.Load(), Disorder: e.disorder.Load(), Copies: e.copies.Load(), Offered: opts.rate,
		Latency: e.lat.percentiles(), StoreLat: e.storeLat.percentiles(), Earlier: e.earlier.Load()}
	r.Lost = max(r.Expected-r.Delivered, 0) + max(r.Sent-r.Stored-r.Errors, 0)
	if v, ok := e.firstErr.Load().(string); ok {
		r.FirstErr = v
	}
	r.Elapsed = end.Sub(start).Seconds()
	if r.Elapsed > 0 {
		done := r.Stored
		if opts.ackInterval >= 0 {
			done = min(done, r.Acked)
		}
		r.Rate = float64(min(done, r.Delivered)) / r.Elapsed
		r.DelivRate = float64(r.Delivered) / r.Elapsed
	}
	return r
}

func peersConns(peers []*peer) []*wsConn {
	out := make([]*wsConn, len(peers))
	for i, p := range peers {
		out[i] = p.conn
	}
	return out
}

// content carries the time the message was due, so the receiver measures send →
// delivered without a lookup (one process, one clock).
func (e *engine) content(due time.Time) string {
	return fmt.Sprintf("%019d ", due.UnixNano()) + e.pad
}

// ioContext is what the message loops give socket calls: coder/websocket arms
// and disarms a context.AfterFunc on every read and write when the context can
// be cancelled, a cost the bench would take from the server it shares the CPUs
// with. runChat closes the sockets when ctx ends instead.
func ioContext(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

func (e *engine) sendLoop(ctx context.Context, p *peer, stop <-chan struct{}, start time.Time, senders int) {
	ioCtx := ioContext(ctx)
	var interval time.Duration
	next := start
	if e.opts.rate > 0 {
		interval = time.Duration(float64(senders) / e.opts.rate * float64(time.Second))
		// Spread the senders' phases so the offered load is smooth, not bursts.
		next = start.Add(time.Duration(int64(interval) * int64(p.idx%senders) / int64(senders)))
	}
	batch := max(e.opts.batch, 1)
	var msg []byte
	for n := 0; ; {
		if interval > 0 {
			if d := time.Until(next); d > 0 {
				select {
				case <-time.After(d):
				case <-stop:
					return
				}
			}
		}
		select {
		case p.slots <- struct{}{}:
		case <-stop:
			return
		}
		// The slot is ours. While more are free at once (and, at a fixed rate,
		// already due), take them too, so that the sends released by one batch of
		// answers go out in one message.
		msg = msg[:0]
		k := 0
		for {
			due := time.Now()
			if interval > 0 {
				// Open loop: latency counts from when the message was due, so a stalled
				// server shows up as latency (no coordinated omission).
				due = next
				next = next.Add(interval)
			}
			// As the real client: a message's first try says so (the server then
			// skips looking for an earlier copy), and the waiting ack rides along.
			f := wire.Frame{Type: wire.TypeSend, ID: p.nextID(), ConversationID: p.conv,
				MessageID: e.nonce + "-" + strconv.Itoa(p.idx) + "-" + strconv.Itoa(n), Content: e.content(due), FirstTry: true}
			if k == 0 && e.opts.ackInterval > 0 {
				f.AckSeq = e.takeAck(p)
			}
			n++
			data, err := wire.EncodeFrame(f)
			if err != nil {
				e.fail(err)
				for range k + 1 { // this frame's slot and those of the frames not sent
					<-p.slots
				}
				return
			}
			p.track(f.ID, data)
			msg = wire.AppendFrame(msg, data)
			k++
			if k >= batch || (interval > 0 && time.Until(next) > 0) {
				break
			}
			select {
			case p.slots <- struct{}{}:
				continue
			default:
			}
			break
		}
		e.sent.Add(int64(k))
		if err := p.conn.writeMessage(ioCtx, msg); err != nil {
			e.fail(fmt.Errorf("send as %s: %w", p.user, err))
			e.errs.Add(int64(k - 1)) // every frame of the message failed
			for range k {
				<-p.slots
			}
			return
		}
	}
}

func (e *engine) readLoop(ctx context.Context, p *peer) {
	ioCtx := ioContext(ctx)
	batch := max(e.opts.batch, 1)
	var acks []byte // acks after every message: joined while the message read holds more frames
	var nAcks int64
	for {
		if nAcks > 0 && (nAcks >= int64(batch) || !p.conn.buffered()) {
			if err := p.conn.writeMessage(ioCtx, acks); err != nil {
				if ctx.Err() == nil {
					e.fail(fmt.Errorf("ack as %s: %w", p.user, err))
				}
				return
			}
			e.acked.Add(nAcks)
			acks, nAcks = acks[:0], 0
		}
		f, err := p.conn.read(ioCtx)
		if err != nil {
			if ctx.Err() == nil && !e.closing.Load() {
				e.fail(fmt.Errorf("read as %s: %w", p.user, err))
			}
			return
		}
		now := time.Now()
		switch f.Type {
		case wire.TypeSent:
			p.answered(f.ID)
			e.stored.Add(1)
			e.expected.Add(p.recipients)
			if ns, err := strconv.ParseInt(f.ID, 10, 64); err == nil {
				e.storeLat.record(p.idx, now.Sub(time.Unix(0, ns)))
			}
			<-p.slots
		case wire.TypeSend:
			// The echo baseline: the frame came back unchanged; it counts as stored
			// and delivered at once.
			p.answered(f.ID)
			e.stored.Add(1)
			e.expected.Add(1)
			e.delivered.Add(1)
			e.lastDelivery.Store(now.UnixNano())
			if ns, err := strconv.ParseInt(f.ID, 10, 64); err == nil {
				e.lat.record(p.idx, now.Sub(time.Unix(0, ns)))
			}
			<-p.slots
		case wire.TypeError:
			if f.ID == "" && f.Error.Code.Retryable() {
				// An ack refused (acks carry no id): the next cumulative ack covers
				// it; with acks on a timer, the timer sends it again.
				e.retried.Add(1)
				p.ackMu.Lock()
				p.reack = true
				p.ackMu.Unlock()
				continue
			}
			frame := p.answered(f.ID)
			if frame != nil && f.Error.Code.Retryable() {
				// Sent again after the hint, still counted from when it was due:
				// the wait shows in the latency, and the slot stays taken.
				e.retried.Add(1)
				wait := max(f.Error.RetryAfter(), 100*time.Millisecond)
				time.AfterFunc(wait, func() { e.resend(ioCtx, p, f.ID, frame) })
				continue
			}
			e.fail(fmt.Errorf("server error to %s: %s: %s", p.user, f.Error.Code, f.Error.Message))
			if f.ID != "" {
				<-p.slots
			}
		case wire.TypeMessage:
			m := f.Message
			// Seq numbers of a conversation must arrive increasing on a live
			// connection. A number already received is a copy: the server's
			// at-least-once for what was not acked yet (the client drops it), a
			// fault for what was acked. A lower number not received before is a
			// reordering.
			seen := p.seen[m.ConversationID]
			if seen == nil {
				seen = &seqSet{}
				p.seen[m.ConversationID] = seen
			}
			if m.SeqNo <= p.lastSeq[m.ConversationID] {
				switch {
				case seen.has(m.SeqNo) && m.SeqNo > p.ackedSettled(m.ConversationID, now):
					e.copies.Add(1)
				default:
					e.disorder.Add(1)
				}
				continue
			}
			p.lastSeq[m.ConversationID] = m.SeqNo
			seen.add(m.SeqNo)
			// A message of an earlier run on the same users (left unacked when that
			// run closed its sockets) comes again on connect: ack it, count it apart.
			current := strings.HasPrefix(m.MessageID, e.nonce+"-")
			if current {
				e.delivered.Add(1)
				e.lastDelivery.Store(now.UnixNano())
			} else {
				e.earlier.Add(1)
			}
			if current && len(m.Content) >= 19 {
				if ns, err := strconv.ParseInt(m.Content[:19], 10, 64); err == nil {
					e.lat.record(p.idx, now.Sub(time.Unix(0, ns)))
				}
			}
			switch {
			case e.opts.ackInterval == 0:
				data, err := wire.EncodeFrame(wire.Frame{Type: wire.TypeAck, ConversationID: m.ConversationID, SeqNo: m.SeqNo})
				if err != nil {
					e.fail(err)
					return
				}
				acks = wire.AppendFrame(acks, data)
				nAcks++
				p.ackMu.Lock()
				p.noteAck(m.ConversationID, m.SeqNo, now)
				p.ackMu.Unlock()
			case e.opts.ackInterval > 0:
				p.ackMu.Lock()
				p.ackSeq, p.ackConv = m.SeqNo, m.ConversationID
				if p.unacked == 0 {
					p.ackFrom = now
				}
				p.unacked++
				p.ackMu.Unlock()
			}
		}
	}
}

// resend sends again a frame the server refused with a retry hint.
func (e *engine) resend(ctx context.Context, p *peer, id string, frame []byte) {
	p.track(id, frame)
	if err := p.conn.writeMessage(ctx, frame); err != nil {
		p.answered(id)
		if !e.closing.Load() {
			e.fail(fmt.Errorf("resend as %s: %w", p.user, err))
		}
		<-p.slots
	}
}

// takeAck hands p's waiting ack to a send into its conversation (0: none),
// counting what it covers as acked.
func (e *engine) takeAck(p *peer) int64 {
	p.ackMu.Lock()
	defer p.ackMu.Unlock()
	if p.unacked == 0 || p.ackConv != p.conv {
		return 0
	}
	e.acked.Add(p.unacked)
	p.unacked = 0
	p.noteAck(p.ackConv, p.ackSeq, time.Now())
	return p.ackSeq
}

// ackLoop sends each peer's cumulative ack once it has waited ackInterval with
// no send to carry it, and every waiting one when stopped, so every delivered
// message ends up acked.
func (e *engine) ackLoop(ctx context.Context, stop <-chan struct{}) {
	if e.opts.ackInterval <= 0 {
		return
	}
	// Checked five times per interval: an ack goes at most a fifth of it late.
	t := time.NewTicker(max(e.opts.ackInterval/5, time.Millisecond))
	defer t.Stop()
	flush := func(all bool) {
		now := time.Now()
		for _, p := range e.peers {
			p.ackMu.Lock()
			seq, conv, n, again := p.ackSeq, p.ackConv, p.unacked, p.reack
			if !again && (n == 0 || !all && now.Sub(p.ackFrom) < e.opts.ackInterval) {
				p.ackMu.Unlock()
				continue
			}
			p.unacked, p.reack = 0, false
			p.noteAck(conv, seq, now)
			p.ackMu.Unlock()
			if err := p.conn.write(ctx, wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: seq}); err != nil {
				if !errors.Is(err, context.Canceled) {
					e.fail(fmt.Errorf("ack as %s: %w", p.user, err))
				}
				continue
			}
			e.acked.Add(n)
		}
	}
	for {
		select {
		case <-t.C:
			flush(false)
		case <-stop:
			flush(true)
			return
		}
	}
}

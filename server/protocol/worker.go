package protocol

import (
	"context"
	"time"

	"github.com/chatterm/chat/internal/slicepool"
	"github.com/chatterm/chat/wire"
)

// request is one queued request of a connection: a frame to serve, or a function
// (the catch-up on connect).
type request struct {
	frame wire.Frame
	run   func()
}

// maxFrameBatch bounds how many queued frames of one kind the worker serves
// together. A client with a window of sends in flight gets them stored in one
// durable write per conversation; acks fold into one boundary move.
const maxFrameBatch = 64

// workQueues recycles the queues of connections whose worker went idle: a busy
// connection queues a burst of requests (a client's window of sends), and
// growing a fresh queue for every burst was a large share of the server's
// allocations. An idle connection holds none.
var workQueues = slicepool.New[request](16, 256)

// maxParkedWorkers bounds the worker goroutines kept between bursts (each with
// the stack it grew). Workers wait on durable writes, so many can run at once.
const maxParkedWorkers = 128

// enqueue hands r to the connection's worker: requests of one connection run in
// arrival order (so a device's sends keep their order) without ever blocking the
// socket's read loop. The worker runs only while there is work (on a pooled
// goroutine), so idle connections cost no goroutine for it.
func (e *Engine) enqueue(c *Session, r request) bool {
	c.mu.Lock()
	if e.svc.Closing() {
		c.mu.Unlock()
		return false
	}
	if len(c.work) >= c.Limit() {
		folded := foldBoundary(c.work, r.frame)
		c.mu.Unlock()
		return folded
	}
	if c.work == nil {
		c.work = workQueues.Get()
	}
	c.work = append(c.work, r)
	if c.working {
		c.mu.Unlock()
		return true
	}
	c.working = true
	c.mu.Unlock()
	if !e.svc.BeginWork() {
		c.mu.Lock()
		c.working, c.work = false, nil
		c.mu.Unlock()
		return false
	}
	e.workers.Go(func() { e.work(c) })
	return true
}

// foldBoundary raises an ack (or read) already queued for f's conversation to
// f's seq_no instead of queueing f, and says whether it did. Used when the
// queue is full: boundaries are cumulative, so the client's ack still takes
// effect rather than being refused with an error it cannot match (acks carry
// no id). An error of the folded move goes to the queued frame's id.
func foldBoundary(work []request, f wire.Frame) bool {
	if f.Type != wire.TypeAck && f.Type != wire.TypeRead {
		return false
	}
	for i := len(work) - 1; i >= 0; i-- {
		q := &work[i].frame
		if work[i].run == nil && q.Type == f.Type && q.ConversationID == f.ConversationID {
			q.SeqNo = max(q.SeqNo, f.SeqNo)
			return true
		}
	}
	return false
}

// work serves c's queue until it is empty. Consecutive sends (or consecutive
// acks, or reads) are taken together: what queued while the last durable write
// ran is served as one batch, the way the store commits in groups.
func (e *Engine) work(c *Session) {
	defer e.svc.EndWork()
	batch := workQueues.Get()
	defer func() { workQueues.Put(batch) }()
	for {
		c.mu.Lock()
		if len(c.work) == 0 {
			c.working = false
			workQueues.Put(c.work)
			c.work = nil
			c.mu.Unlock()
			return
		}
		n := 1
		if first := c.work[0]; first.run == nil && batchable(first.frame.Type) {
			for n < len(c.work) && n < maxFrameBatch && c.work[n].run == nil && c.work[n].frame.Type == first.frame.Type {
				n++
			}
		}
		batch = append(batch[:0], c.work[:n]...)
		clear(c.work[:n])
		if n == len(c.work) {
			c.work = c.work[:0] // all taken: the storage is reused from its start
		} else {
			c.work = c.work[n:]
		}
		c.mu.Unlock()
		e.serve(c, batch)
		clear(batch)
	}
}

func batchable(typ string) bool {
	return typ == wire.TypeSend || typ == wire.TypeAck || typ == wire.TypeRead
}

// serve runs one batch taken by work: a function, a sync, or frames of one
// type (sends, acks or reads) under one bound for their store calls.
func (e *Engine) serve(c *Session, batch []request) {
	if e.svc.Closing() {
		// Shutting down: the sockets are being closed, and what is still
		// queued was never answered, so dropping it loses nothing — clients
		// send it again after they reconnect (a send keeps its message_id,
		// acks and syncs are repeated). Serving it would hold Shutdown for as
		// long as a full queue of writes takes.
		return
	}
	f := batch[0].frame
	switch {
	case batch[0].run != nil:
		batch[0].run()
		return
	case f.Type == wire.TypeSync:
		e.sync(c, f)
		return
	case f.Type == wire.TypeTyping:
		ctx, cancel := context.WithTimeout(e.svc.Context(), time.Second)
		defer cancel()
		if err := e.svc.Typing(ctx, c.UserID, f.ConversationID, c.Conn); err != nil {
			e.log.Debug("typing dropped", "user", c.UserID, "conversation", f.ConversationID, "err", err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(e.svc.Context(), 10*time.Second)
	defer cancel()
	if f.Type == wire.TypeSend {
		e.sendFrames(ctx, c, batch)
	} else {
		e.boundaryFrames(ctx, c, batch)
	}
}

// sendFrames stores a connection's queued sends, one durable write per
// conversation, and answers each with "sent" or an error.
func (e *Engine) sendFrames(ctx context.Context, c *Session, batch []request) {
	for convID, idx := range groupByConversation(batch) {
		reqs := make([]wire.SendRequest, len(idx))
		var ack int64 // acks carried by the sends are cumulative: the highest says it all
		for i, k := range idx {
			f := &batch[k].frame
			reqs[i] = f.SendRequest()
			ack = max(ack, f.AckSeq)
		}
		for i, r := range e.svc.SendAcked(ctx, c.UserID, convID, reqs, ack, c.Conn) {
			f := &batch[idx[i]].frame
			if r.Err != nil {
				e.reply(c, wire.ErrorFrame(f.ID, r.Err))
				continue
			}
			if ack > 0 { // a send stored: the user is a member
				c.noteHeld(convID, ack)
			}
			e.reply(c, wire.Frame{Type: wire.TypeSent, ID: f.ID, ConversationID: r.Resp.ConversationID, SeqNo: r.Resp.SeqNo,
				MessageID: r.Resp.MessageID, Timestamp: r.Resp.Timestamp, Content: r.Resp.Content, Mentions: r.Resp.Mentions})
		}
	}
}

// boundaryFrames serves queued acks or reads (all of one type). They are
// cumulative, so those of one conversation fold into one boundary move; an
// error goes to the last frame of that conversation.
func (e *Engine) boundaryFrames(ctx context.Context, c *Session, batch []request) {
	for convID, idx := range groupByConversation(batch) {
		top := &batch[idx[len(idx)-1]].frame
		seq := top.SeqNo
		for _, k := range idx {
			seq = max(seq, batch[k].frame.SeqNo)
		}
		var err error
		if top.Type == wire.TypeAck {
			// The acking device knows what it acked: it gets no status frame for it.
			_, err = e.svc.Advance(ctx, c.UserID, convID, seq, 0, c.Conn)
		} else {
			_, err = e.svc.MarkRead(ctx, c.UserID, convID, seq)
		}
		if err != nil {
			e.reply(c, wire.ErrorFrame(top.ID, err))
		} else if top.Type == wire.TypeAck {
			c.noteHeld(convID, seq)
		}
	}
}

// groupByConversation yields each conversation of the batch's frames, in order
// of first appearance, with the indexes of its frames in order.
func groupByConversation(batch []request) func(yield func(string, []int) bool) {
	return func(yield func(string, []int) bool) {
		if len(batch) == 1 {
			yield(batch[0].frame.ConversationID, []int{0})
			return
		}
		var order []string
		groups := map[string][]int{}
		for i := range batch {
			conv := batch[i].frame.ConversationID
			if _, ok := groups[conv]; !ok {
				order = append(order, conv)
			}
			groups[conv] = append(groups[conv], i)
		}
		for _, id := range order {
			if !yield(id, groups[id]) {
				return
			}
		}
	}
}

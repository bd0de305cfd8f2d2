package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/heapwarm"
	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

const tailUsage = `
Usage: chat tail [--with USER | --group ID] [--mentions] [--raw] [--json]

Follows new messages until interrupted (Ctrl-C), printing each as it arrives,
and acks their delivery (the senders see them as delivered). Messages that
were waiting for you come first. --with or --group limits it to one
conversation (others are left undelivered for your other devices).
--mentions prints only the messages that mention you (every message is still
acked). With --json, one message object per line; --raw prints text as
written, not drawn from its Markdown. Reconnects by itself when the
connection drops; reconnection notes go to stderr.

Examples:
  chat tail
  chat tail --with bob --json | jq -r .content
`

func (a *app) runTail(ctx context.Context, args []string) error {
	fs := a.flags("tail", tailUsage)
	with := fs.String("with", "", "only the direct conversation with `USER`")
	group := fs.String("group", "", "only conversation `ID`")
	asJSON := fs.Bool("json", false, "one JSON message per line")
	onlyMentions := fs.Bool("mentions", false, "only messages that mention you (@you, @all, @here)")
	raw := fs.Bool("raw", false, "print message text as stored, its Markdown not drawn")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	// The heap's next pages made present in one call, on a goroutine of its
	// own, while tail logs in and connects: a tail that waits quiet, then
	// prints a burst, grows its heap to the collector's goal for the first
	// time in that burst, and took ~1,100 page faults in its first 2,000
	// messages (docs/tui.md, "chat tail's first burst").
	heapwarm.Start()
	api, acct, err := a.login()
	if err != nil {
		return err
	}
	conv, err := target(ctx, api, acct, "--with", *with, *group, false)
	if err != nil {
		return err
	}
	if *with != "" {
		// Nothing would ever come from nobody: say so now, as history does.
		if err := userMissing(ctx, api, *with); err != nil {
			return err
		}
	}
	me, err := self(ctx, api, acct)
	if err != nil {
		return err
	}
	// A private in-memory cache: tail is a device of its own, and what it has
	// printed is what it dedupes against. Nothing searches it, so nothing is
	// queued for a search index.
	store, err := localstore.Open(ctx, ":memory:", localstore.Options{UserID: me, Unsearched: true})
	if err != nil {
		return err
	}
	defer store.Close()
	// A commit's messages in one event: one channel send and one pass of
	// take for hundreds in a burst.
	cfg := client.SessionConfig{API: api, Store: store, MessageBatches: true}
	if conv != "" {
		cfg.Filter = func(id string) bool { return id == conv }
	}
	// One processor, as the TUI after its paint (procs.go): tail's work is
	// the same chain of hand-offs, read, commit, event, print.
	if prev := runtime.GOMAXPROCS(0); oneProcessor(os.Environ()) {
		defer runtime.GOMAXPROCS(prev) // the process may go on (a test's)
	}
	sess := client.NewSession(cfg)
	done := make(chan error, 1)
	go func() { done <- sess.Run(ctx) }()

	quotes := cachedQuotes(ctx, store, api)
	names := newNameCache(ctx, api)
	who := namer(names.label)
	text := a.textFormat(*raw)
	t := newTailer(a.stdout, a.stderr, newTailOrder(store))
	enc := json.NewEncoder(t.out)
	t.print = func(w io.Writer, m wire.Message) error {
		if *onlyMentions && !wire.MentionsUser(m.Mentions, m.SenderID, me) {
			return nil
		}
		if *asJSON {
			return enc.Encode(m)
		}
		printMessage(w, m, conv == "", quotes, who, text)
		return nil
	}
	t.learnProfile = names.learn
	t.reconnected = names.askAgain
	defer t.out.Flush()
	// A gap is passed by the session's cursor without a message to say so:
	// held messages are looked at again on this tick, which runs only while
	// something is held.
	var tick heldTicker
	defer tick.stop()
	for {
		select {
		case err := <-done:
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return nil // interrupted: the normal end of tail
			}
			return err
		case <-tick.c():
			if err := t.releaseHeld(ctx); err != nil {
				return err
			}
		case ev := <-sess.Events():
			if err := t.take(ctx, ev, sess.Events()); err != nil {
				return err
			}
		}
		tick.run(t.order.anyHeld())
	}
}

// heldTicker is tail's tick for held messages, running only while some are
// held: an idle tail ticking four times a second spent 0.17% of a core
// (chatbench tui-burst's "chat tail idle"), where the TUI idles at 0.05%.
type heldTicker struct{ t *time.Ticker }

const heldTick = 250 * time.Millisecond

// c is the tick's channel, nil (never ready) while it is stopped.
func (h *heldTicker) c() <-chan time.Time {
	if h.t == nil {
		return nil
	}
	return h.t.C
}

// run starts or stops the tick as something is held or not.
func (h *heldTicker) run(holding bool) {
	switch {
	case holding && h.t == nil:
		h.t = time.NewTicker(heldTick)
	case !holding && h.t != nil:
		h.stop()
	}
}

func (h *heldTicker) stop() {
	if h.t != nil {
		h.t.Stop()
		h.t = nil
	}
}

// tailer prints what a session reports for chat tail, a batch at a time: the
// event that woke it and every one already waiting behind it go through
// tailOrder together (one cursor read per conversation, not one per
// message) and out through one buffered write, flushed before tail waits
// again. A burst's messages came one write(2) and one cursor query each,
// a quarter of tail's CPU (docs/tui.md, "chat tail").
type tailer struct {
	out    *bufio.Writer
	stderr io.Writer
	order  *tailOrder
	// print writes one released message (text or JSON, or nothing when
	// --mentions leaves it out).
	print        func(w io.Writer, m wire.Message) error
	learnProfile func(wire.Profile)
	lastNote     string
	pending      []wire.Message // messages of the batch, in arrival order

	// reconnected is told when the connection comes back after it was lost,
	// the lines pending before printed (tailnames.go).
	reconnected func()
	status      client.ConnStatus
}

// tailBatchMax bounds a batch, in events and in messages (a
// client.MessagesEvent brings a whole commit's), so a stream that never
// lets the events channel empty still prints as it goes.
const tailBatchMax = 512

func newTailer(stdout, stderr io.Writer, order *tailOrder) *tailer {
	return &tailer{out: bufio.NewWriterSize(stdout, 64<<10), stderr: stderr, order: order}
}

// take handles ev and the events already waiting in events, in order, then
// flushes what they printed.
func (t *tailer) take(ctx context.Context, ev client.Event, events <-chan client.Event) error {
	if err := t.event(ctx, ev); err != nil {
		return err
	}
	for n := 1; n < tailBatchMax && len(t.pending) < tailBatchMax; n++ {
		select {
		case ev := <-events:
			if err := t.event(ctx, ev); err != nil {
				return err
			}
			continue
		default:
		}
		break
	}
	if err := t.printPending(ctx); err != nil {
		return err
	}
	return t.out.Flush()
}

// event takes one session event; messages wait in pending for the batch's
// end. An event that changes what is printed (a note on stderr, a restore,
// a name) prints what is pending first, so it applies between the same
// messages as when each was printed on arrival; the others (acks, ticks,
// typing: tail shows none of them) wait for nothing.
func (t *tailer) event(ctx context.Context, ev client.Event) error {
	switch ev := ev.(type) {
	case client.MessageEvent:
		t.pending = append(t.pending, ev.Message)
	case client.MessagesEvent:
		t.pending = append(t.pending, ev.Messages...)
	case client.StateEvent:
		note := ""
		if ev.State.Status == client.Reconnecting {
			note = fmt.Sprintf("connection lost (%s); reconnecting in %s",
				ev.State.Err, time.Until(ev.State.RetryAt).Round(100*time.Millisecond))
		} else if ev.State.Status == client.Connected && t.lastNote != "" {
			note = "reconnected"
		}
		if note != "" {
			if err := t.printAndFlush(ctx); err != nil {
				return err
			}
			fmt.Fprintln(t.stderr, "chat tail: "+termtext.OneLine(note))
			t.lastNote = note
		}
		if err := t.noteReconnect(ctx, ev.State.Status); err != nil {
			return err
		}
	case client.RestoredEvent:
		if err := t.printAndFlush(ctx); err != nil {
			return err
		}
		fmt.Fprintln(t.stderr, "chat tail: "+ev.Notice())
		t.order.restored(ev.Conversations)
	case client.ProfileEvent:
		// A name changed: the lines from now on show it.
		if err := t.printPending(ctx); err != nil {
			return err
		}
		if t.learnProfile != nil {
			t.learnProfile(ev.Profile)
		}
	}
	return nil
}

// printAndFlush prints what is pending and writes it out, before a line on
// stderr.
func (t *tailer) printAndFlush(ctx context.Context) error {
	if err := t.printPending(ctx); err != nil {
		return err
	}
	return t.out.Flush()
}

// printPending puts the batch's messages through tailOrder and prints what
// it releases.
func (t *tailer) printPending(ctx context.Context) error {
	if len(t.pending) == 0 {
		return nil
	}
	msgs, err := t.order.addBatch(ctx, t.pending)
	clear(t.pending)
	t.pending = t.pending[:0]
	if err != nil {
		return err
	}
	return t.printAll(msgs)
}

// releaseHeld prints what the cursor let out since the last look without a
// new message (the periodic tick).
func (t *tailer) releaseHeld(ctx context.Context) error {
	for _, id := range t.order.holding() {
		msgs, err := t.order.release(ctx, id)
		if err != nil {
			return err
		}
		if err := t.printAll(msgs); err != nil {
			return err
		}
	}
	return t.out.Flush()
}

func (t *tailer) printAll(msgs []wire.Message) error {
	for _, m := range msgs {
		if err := t.print(t.out, m); err != nil {
			return err
		}
	}
	return nil
}

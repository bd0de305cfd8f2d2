package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// A burst into the open chat sends one read report at a time: boundaries
// seen while one is out wait for its answer, and then only the highest goes.
func TestReadReportsOneAtATime(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 20)
	h.key("enter")
	if be.reads[bobConv] != 7 {
		t.Fatalf("read = %d after opening, want 7", be.reads[bobConv])
	}
	arrive := func(seq int64) []tea.Msg {
		var cmd tea.Cmd
		h.m, cmd = h.m.Update(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: seq,
			MessageID: "burst" + string(rune('0'+seq)), SenderID: "bob", Content: "burst", Timestamp: fixtureNow}})
		return []tea.Msg{cmd}
	}
	first := arrive(8)
	for seq := int64(9); seq <= 10; seq++ {
		if got := markReports(arrive(seq)); len(got) != 0 {
			t.Fatalf("message %d sent a read report (%+v) while the one for 8 was out", seq, got)
		}
	}
	if be.reads[bobConv] != 7 {
		t.Fatalf("read = %d before the first report ran, want 7", be.reads[bobConv])
	}
	got := markReports(first)
	if len(got) != 1 || got[0].seq != 8 {
		t.Fatalf("first reports = %+v, want one for 8", got)
	}
	var cmd tea.Cmd
	h.m, cmd = h.m.Update(got[0])
	got = markReports([]tea.Msg{cmd})
	if len(got) != 1 || got[0].seq != 10 {
		t.Fatalf("after the answer for 8: reports = %+v, want one for 10 (the highest seen meanwhile)", got)
	}
	if be.reads[bobConv] != 10 {
		t.Fatalf("read = %d, want 10", be.reads[bobConv])
	}
	h.m, cmd = h.m.Update(got[0])
	if got := markReports([]tea.Msg{cmd}); len(got) != 0 {
		t.Fatalf("after the answer for 10: reports = %+v, want none", got)
	}
}

// markReports runs the commands among msgs (and the batches they hold) and
// returns the read reports they made.
func markReports(msgs []tea.Msg) []markedReadMsg {
	var out []markedReadMsg
	for _, msg := range msgs {
		switch msg := msg.(type) {
		case tea.Cmd:
			if msg != nil {
				out = append(out, markReports(runCmds([]tea.Cmd{msg}))...)
			}
		case tea.BatchMsg:
			out = append(out, markReports(runCmds(msg))...)
		case markedReadMsg:
			out = append(out, msg)
		}
	}
	return out
}

// After a report's answer the conversation rests before the next report:
// what is seen meanwhile goes as one report when the rest ends, and what
// still waits at quit goes then.
func TestReadReportsRestBetween(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 20)
	h.root().c.readGap = time.Hour // the rest ends when the test says (readRestedMsg)
	h.key("enter")
	if be.reads[bobConv] != 7 {
		t.Fatalf("read = %d after opening, want 7", be.reads[bobConv])
	}
	arrive := func(seq int64) {
		h.send(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: seq,
			MessageID: "rest" + string(rune('0'+seq)), SenderID: "bob", Content: "burst", Timestamp: fixtureNow}})
	}
	arrive(8)
	arrive(9)
	if be.reads[bobConv] != 7 {
		t.Fatalf("read = %d while resting after the report for 7, want 7", be.reads[bobConv])
	}
	h.send(readRestedMsg{bobConv})
	if be.reads[bobConv] != 9 {
		t.Fatalf("read = %d after the rest, want 9 (the highest seen meanwhile)", be.reads[bobConv])
	}
	arrive(10)
	if be.reads[bobConv] != 9 {
		t.Fatalf("read = %d while resting after the report for 9, want 9", be.reads[bobConv])
	}
	m := h.root()
	m.quit()()
	if be.reads[bobConv] != 10 {
		t.Fatalf("read = %d after quitting, want 10: the report waiting at quit went", be.reads[bobConv])
	}
}

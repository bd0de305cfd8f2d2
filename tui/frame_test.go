package tui

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// An Update that changes nothing on screen hands the renderer the frame it
// already has (the same string, nothing built or allocated); one that does
// hands it a new frame.
func TestUnchangedFrameIsTheSameString(t *testing.T) {
	for _, width := range []int{80, 130} { // without and with the sidebar
		be := fixture()
		h := newHarness(t, be, width, 30)
		h.key("enter")
		before := h.m.View().Content
		h.m, _ = h.m.Update(markedReadMsg{conv: bobConv, seq: 7})
		same := h.m.View().Content
		if same != before {
			t.Fatalf("width %d: a read report's answer changed the frame", width)
		}
		if unsafe.StringData(same) != unsafe.StringData(before) {
			t.Fatalf("width %d: the frame was built again though nothing on screen changed", width)
		}
		h.send(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: 8, MessageID: "b8", SenderID: "bob",
			Content: "a new line on screen", Timestamp: fixtureNow}})
		after := h.m.View().Content
		if !strings.Contains(after, "a new line on screen") {
			t.Fatalf("width %d: a new message is not in the next frame:\n%s", width, after)
		}
	}
}

package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestAPICodecMatchesEncodingJSON: answers go through generated code
// (api_easyjson.go); they must be byte for byte what encoding/json writes, and
// read back the same way, or a client on encoding/json would see a difference.
func TestAPICodecMatchesEncodingJSON(t *testing.T) {
	ts := time.Date(2026, 11, 21, 1, 2, 3, 456789000, time.UTC)
	msg := Message{ConversationID: "dm:alice:bob", SeqNo: 7, MessageID: "m-7", SenderID: "alice", Content: "<b>hi</b> & \u2028 \"quoted\" \x01", Timestamp: ts}
	values := []any{
		&HistoryResponse{Messages: []Message{msg, {ConversationID: "dm:alice:bob", SeqNo: 6, MessageID: "m-6", SenderID: "bob", Attachment: "media/bob/x", Timestamp: ts}}, NextBeforeSeq: 6},
		&HistoryResponse{},
		&SendResponse{ConversationID: "dm:alice:bob", SeqNo: 7, MessageID: "m-7", Timestamp: ts},
		&SendResponse{ConversationID: "g:x", SeqNo: 8, MessageID: "m-8", Timestamp: ts, Mentions: []string{"bob", MentionHere}},
		&StatusResponse{ConversationID: "g:x", Members: []MemberStatus{{UserID: "bob", LastDeliveredSeq: 3, LastReadSeq: 2}}},
		&InboxResponse{Conversations: []InboxEntry{{ConversationID: "g:x", Type: Group, Name: "crew", LastSeq: 9, LastMessageBody: "yo", LastMessageSender: "bob", LastMessageAt: ts, Unread: 2, Mentions: 1, Peer: ""}, {ConversationID: "dm:a:b"}}},
		&InboxResponse{Conversations: []InboxEntry{{ConversationID: "dm:a:b", LastSeq: 4, LastReadSeq: 2, Unread: 2}}, Stale: true},
		&Conversation{ConversationID: "g:x", Type: Group, Name: "crew", Participants: []Participant{{UserID: "a", Role: RoleAdmin, JoinedAt: ts}}, CreatedAt: ts},
		&AuthResponse{UserID: "alice", Token: "t", ExpiresAt: ts},
		&MentionSetting{AllAdminsOnly: true},
		&MentionsResponse{Mentions: []Message{{ConversationID: "g:x", SeqNo: 3, MessageID: "m-3", SenderID: "bob", Content: "@alice hi", Timestamp: ts, Mentions: []string{"alice"}}}, Next: MentionCursor{Time: ts, ConversationID: "g:x", SeqNo: 3}.String(), NextBefore: ts},
	}
	for _, v := range values {
		var buf bytes.Buffer
		size := -1
		if err := WriteJSON(&buf, v, func(n int) { size = n }); err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		if size != buf.Len() {
			t.Errorf("%T: start said %d bytes, %d written", v, size, buf.Len())
		}
		ours := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		std, _ := json.Marshal(v)
		if string(ours) != string(std) {
			t.Errorf("%T encodes differently:\nours %s\nstd  %s", v, ours, std)
		}
		back := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		if err := DecodeAnswer(std, back); err != nil {
			t.Fatalf("%T: decode: %v", v, err)
		}
		if !reflect.DeepEqual(back, v) {
			t.Errorf("%T decodes differently:\ngot  %+v\nwant %+v", v, back, v)
		}
	}
}

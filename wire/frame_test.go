package wire

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleFrames() []Frame {
	ts := time.Date(2026, 11, 20, 16, 20, 0, 123, time.UTC)
	return []Frame{
		{Type: TypeSend, ID: "r1", ConversationID: "dm:alice:bob", MessageID: "m1", Content: "hey ☕"},
		{Type: TypeSend, ID: "r3", ConversationID: "g:x", MessageID: "m2", Attachment: "media/alice/abcdefghijklmnop0123",
			AttachmentInfo: &AttachmentInfo{Name: "report 47.pdf", Type: "application/pdf", Size: 120034}},
		{Type: TypeSend, ID: "r4", ConversationID: "g:x", MessageID: "m3", Content: "agreed", ReplyTo: 7},
		{Type: TypeSend, ID: "r5", ConversationID: "g:x", MessageID: "m4", Content: "👍", Kind: KindReaction, TargetSeq: 7},
		{Type: TypeSend, ID: "r6", ConversationID: "g:x", MessageID: "m5", Kind: KindDelete, TargetSeq: 7},
		{Type: TypeSend, ID: "r7", ConversationID: "dm:alice:bob", MessageID: "m6", Content: "and an ack", FirstTry: true, AckSeq: 43},
		{Type: TypeAck, ConversationID: "dm:alice:bob", SeqNo: 44},
		{Type: TypeRead, ConversationID: "g:abc", SeqNo: 42},
		{Type: TypeSync, ID: "s1", Cursors: []Cursor{{ConversationID: "dm:alice:bob", SeqNo: 3}, {ConversationID: "g:x", SeqNo: 0}}},
		{Type: TypePing, ID: "p"},
		{Type: TypePong, ID: "p"},
		{Type: TypeTyping, ConversationID: "g:abc"},
		{Type: TypeTyping, ConversationID: "g:abc", UserID: "bob"},
		{Type: TypeHello, UserID: "alice"},
		{Type: TypeHello, UserID: "alice", Protocol: ProtocolVersion},
		{Type: TypeHello, UserID: "alice", Protocol: ProtocolVersion, StoreID: "3f9a0c1d2e4b5a6978877665544332211"},
		{Type: TypeSent, ID: "r1", ConversationID: "dm:alice:bob", SeqNo: 7, MessageID: "m1", Timestamp: ts},
		{Type: TypeSent, ID: "r5", ConversationID: "g:x", SeqNo: 9, MessageID: "m4", Content: "👍", Timestamp: ts},
		{Type: TypeSent, ID: "r6", ConversationID: "g:x", SeqNo: 10, MessageID: "m5", Timestamp: ts, Mentions: []string{"carol", MentionAll}},
		{Type: TypeMessage, Message: &Message{ConversationID: "dm:alice:bob", SeqNo: 7, MessageID: "m1", SenderID: "alice", Content: "hi", Attachment: "media/alice/abcdefghijklmnop0123", Timestamp: ts}},
		{Type: TypeMessage, Message: &Message{ConversationID: "g:x", SeqNo: 7, MessageID: "m1", SenderID: "alice", Content: "hi (fixed)", Timestamp: ts,
			ReplyTo: 3, Edited: true, Reactions: map[string]string{"bob": "👍", "carol": "🎉"}, UpdatedSeq: 12,
			Attachment: "media/alice/abcdefghijklmnop0123", AttachmentInfo: &AttachmentInfo{Name: "a.png", Type: "image/png", Size: 3}}},
		{Type: TypeMessage, Message: &Message{ConversationID: "g:x", SeqNo: 8, MessageID: "m8", SenderID: "alice", Content: "@carol @all look", Timestamp: ts,
			Mentions: []string{"carol", MentionAll}}},
		{Type: TypeMessage, Message: &Message{ConversationID: "g:x", SeqNo: 12, MessageID: "m9", SenderID: "bob", Kind: KindEdit, TargetSeq: 7, Content: "hi (fixed)", Timestamp: ts}},
		{Type: TypeMessage, Message: &Message{ConversationID: "g:x", SeqNo: 13, MessageID: "m10", SenderID: "bob", Deleted: true, UpdatedSeq: 14, Timestamp: ts}},
		{Type: TypeMessage, Message: &Message{ConversationID: "g:x", SeqNo: 14, MessageID: "m11", SenderID: "alice", Kind: KindAdded, Members: []string{"carol", "dave"}, Timestamp: ts}},
		{Type: TypeMessage, Message: &Message{ConversationID: "g:x", SeqNo: 15, MessageID: "m12", SenderID: "alice", Kind: KindTopic, Content: "deploys & incidents", Timestamp: ts}},
		{Type: TypeStatus, ConversationID: "g:abc", Status: &MemberStatus{UserID: "bob", LastDeliveredSeq: 9, LastReadSeq: 8}},
		{Type: TypeSynced, ID: "s1", More: true},
		{Type: TypeResync},
		{Type: TypeConversation, Conv: &Conversation{ConversationID: "g:ops", Type: Channel, Name: "ops", Topic: "deploys", LastSeq: 3, CreatedAt: ts}},
		{Type: TypeConversation, Conv: &Conversation{ConversationID: "g:abc", Type: Group, Name: "team", LastSeq: 3, CreatedAt: ts,
			Participants: []Participant{{UserID: "alice", Role: RoleAdmin, JoinedAt: ts}}}},
		{Type: TypeError, ID: "r2", Error: &Error{Code: CodeRateLimited, Message: "slow down", RetryAfterMs: 250}},
		{Type: TypeProfile, Profile: &Profile{UserID: "alice", DisplayName: "Alice Liddell", Status: "in Wonderland 🐇"}},
		{Type: TypeProfile, Profile: &Profile{UserID: "bob", DisplayName: "bob", Admin: true}},
	}
}

func TestFrameRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range sampleFrames() {
		t.Run(f.Type+f.ID, func(t *testing.T) {
			b, err := EncodeFrame(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeFrame(b)
			if err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			if !reflect.DeepEqual(got, f) {
				t.Fatalf("round trip changed the frame:\n got %+v\nwant %+v", got, f)
			}
		})
		seen[f.Type] = true
	}
	for _, typ := range []string{TypeSend, TypeAck, TypeRead, TypeSync, TypePing, TypeHello, TypeSent, TypeMessage,
		TypeStatus, TypeSynced, TypeConversation, TypeError, TypePong, TypeTyping, TypeProfile} {
		if !seen[typ] {
			t.Errorf("frame type %q has no round-trip case", typ)
		}
	}
}

func TestDecodeFrameErrors(t *testing.T) {
	cases := map[string]string{
		"ErrNotJSON":          `{"type":`,
		"ErrNoType":           `{}`,
		"ErrUnknownType":      `{"type":"launch"}`,
		"ErrTrailing":         `{"type":"ping"} {"type":"ping"}`,
		"ErrSendNoContent":    `{"type":"send","conversation_id":"dm:a:b","message_id":"m"}`,
		"ErrSendBadConv":      `{"type":"send","conversation_id":"x","message_id":"m","content":"hi"}`,
		"ErrSendBadMsgID":     `{"type":"send","conversation_id":"dm:a:b","message_id":"has space","content":"hi"}`,
		"ErrBadAttachment":    `{"type":"send","conversation_id":"dm:a:b","message_id":"m","attachment":"../etc/passwd"}`,
		"ErrSendAckNeg":       `{"type":"send","conversation_id":"dm:a:b","message_id":"m","content":"hi","ack_seq":-1}`,
		"ErrAckZero":          `{"type":"ack","conversation_id":"dm:a:b","seq_no":0}`,
		"ErrReadNegative":     `{"type":"read","conversation_id":"dm:a:b","seq_no":-3}`,
		"ErrSeqNotNumber":     `{"type":"ack","conversation_id":"dm:a:b","seq_no":"7"}`,
		"ErrSyncBadCursor":    `{"type":"sync","cursors":[{"conversation_id":"","seq_no":1}]}`,
		"ErrTypingNoConv":     `{"type":"typing"}`,
		"ErrHelloStoreID":     `{"type":"hello","user_id":"alice","store_id":"has space"}`,
		"ErrHelloLongID":      `{"type":"hello","user_id":"alice","store_id":"` + strings.Repeat("a", MaxStoreIDBytes+1) + `"}`,
		"ErrTooLarge":         `{"type":"send","content":"` + strings.Repeat("x", MaxFrameBytes) + `"}`,
		"ErrRawNUL":           "{\"type\":\"send\",\"conversation_id\":\"dm:a:b\",\"message_id\":\"m\",\"content\":\"a\x00b\"}",
		"ErrRawESC":           "{\"type\":\"send\",\"conversation_id\":\"dm:a:b\",\"message_id\":\"m\",\"content\":\"\x1b[2J\"}",
		"ErrRawInID":          "{\"type\":\"ping\",\"id\":\"a\x00\"}",
		"ErrProfileNone":      `{"type":"profile"}`,
		"ErrSentMentionID":    `{"type":"sent","conversation_id":"g:x","seq_no":1,"message_id":"m","mentions":["not a user"]}`,
		"ErrSentMentionTwice": `{"type":"sent","conversation_id":"g:x","seq_no":1,"message_id":"m","mentions":["bob","bob"]}`,
		"ErrProfileNoUser":    `{"type":"profile","profile":{"display_name":"Alice"}}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeFrame([]byte(in))
			if err == nil {
				t.Fatal("expected an error")
			}
			if c := ErrorCode(err); c != CodeInvalid && c != CodeTooLarge {
				t.Fatalf("code = %s, want invalid or too_large", c)
			}
		})
	}
}

func TestDirectConversationID(t *testing.T) {
	if a, b := DirectConversationID("bob", "alice"), DirectConversationID("alice", "bob"); a != b || a != "dm:alice:bob" {
		t.Fatalf("ids differ or are wrong: %q %q", a, b)
	}
	a, b, ok := DirectMembers("dm:alice:bob")
	if !ok || a != "alice" || b != "bob" {
		t.Fatalf("DirectMembers = %q %q %v", a, b, ok)
	}
	// A note to self is the direct conversation whose two members are one user.
	if a, b, ok := DirectMembers("dm:alice:alice"); !ok || a != "alice" || b != "alice" {
		t.Fatalf("DirectMembers(note to self) = %q %q %v", a, b, ok)
	}
	for _, bad := range []string{"dm:bob:alice", "dm:alice", "g:xyz", "dm:Alice:bob", "dm:a:b:c"} {
		if _, _, ok := DirectMembers(bad); ok {
			t.Errorf("DirectMembers(%q) accepted", bad)
		}
	}
}

func TestValidateUserID(t *testing.T) {
	for _, ok := range []string{"alice", "bob.smith", "a1_b-c", "0x"} {
		if err := ValidateUserID(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Alice", "a:b", ".x", "a b", strings.Repeat("a", 33), "é"} {
		if ValidateUserID(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCodeHTTPStatusTable(t *testing.T) {
	// Codes that share a status with a broader one map back to it, for a
	// response with no JSON body.
	for code := range codeInfo {
		// A body-less answer cannot tell the codes that share a status apart;
		// each maps back to the general one of its status.
		got := CodeFromHTTPStatus(code.HTTPStatus())
		shared := (code == CodeOverloaded || code == CodeMaybeStored) && got == CodeUnavailable ||
			code == CodeMessageIDTaken && got == CodeConflict ||
			code == CodeQuota && got == CodeTooLarge || code == CodeBlank && got == CodeInvalid ||
			code == CodeConfusable && got == CodeConflict || code == CodeAccountDisabled && got == CodeForbidden ||
			code == CodeMentionAllAdminsOnly && got == CodeForbidden
		if got != code && !shared {
			t.Errorf("%s → %d → %s", code, code.HTTPStatus(), got)
		}
	}
}

package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMembershipLine(t *testing.T) {
	names := map[string]string{"alice": "Alice", "carol": "Carol"}
	name := func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return id
	}
	for _, c := range []struct {
		m    Message
		want string
	}{
		{Message{SenderID: "alice", Kind: KindAdded, Members: []string{"carol"}}, "Alice added Carol"},
		{Message{SenderID: "alice", Kind: KindAdded, Members: []string{"carol", "dave", "erin"}}, "Alice added Carol, dave and erin"},
		{Message{SenderID: "alice", Kind: KindRemoved, Members: []string{"dave"}}, "Alice removed dave"},
		{Message{SenderID: "dave", Kind: KindLeft}, "dave left"},
		{Message{SenderID: "erin", Kind: KindJoined}, "erin joined"},
		{Message{SenderID: "alice", Kind: KindRenamed, Content: "ops"}, "Alice renamed the group to “ops”"},
		{Message{SenderID: "alice", Kind: KindTopic, Content: "deploys"}, "Alice set the topic to “deploys”"},
		{Message{SenderID: "alice", Kind: KindTopic}, "Alice cleared the topic"},
		{Message{SenderID: "alice", Kind: KindAdminGranted, Members: []string{"carol"}}, "Alice made Carol admin"},
		{Message{SenderID: "alice", Kind: KindAdminRevoked, Members: []string{"carol"}}, "Alice took admin from Carol"},
		{Message{SenderID: "alice", Kind: KindReaction, Content: "👍"}, ""},
		{Message{SenderID: "alice", Content: "hi"}, ""},
	} {
		if got := c.m.MembershipLine(name); got != c.want {
			t.Errorf("%s %v: %q, want %q", c.m.Kind, c.m.Members, got, c.want)
		}
	}
	if got := (Message{SenderID: "alice", Kind: KindJoined}).MembershipLine(nil); got != "alice joined" {
		t.Errorf("without names: %q", got)
	}
}

// A membership event is the server's record of a request: no client sends one.
func TestMembershipKindsCannotBeSent(t *testing.T) {
	for _, kind := range []string{KindAdded, KindRemoved, KindLeft, KindJoined, KindRenamed, KindTopic, KindAdminGranted, KindAdminRevoked} {
		if !IsMembershipKind(kind) {
			t.Errorf("%s is not a membership kind", kind)
		}
		err := SendRequest{MessageID: "m1", Kind: kind, TargetSeq: 1, Content: "x"}.Validate()
		if ErrorCode(err) != CodeInvalid || !strings.Contains(err.Error(), "recorded by the server") {
			t.Errorf("send of %s: %v", kind, err)
		}
	}
	for _, kind := range []string{"", KindReaction, KindEdit, KindDelete, "member"} {
		if IsMembershipKind(kind) {
			t.Errorf("%q counted as a membership kind", kind)
		}
	}
}

func TestValidateTopic(t *testing.T) {
	for _, ok := range []string{"", "deploys & incidents", strings.Repeat("x", MaxTopicLen)} {
		if err := ValidateTopic(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"a\nb", "a\x1b[2Jb", "gro\u202eup", "   ", strings.Repeat("x", MaxTopicLen+1)} {
		if err := ValidateTopic(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The channel answers go through the generated codec too: byte for byte what
// encoding/json writes, and read back alike.
func TestChannelCodecMatchesEncodingJSON(t *testing.T) {
	ts := time.Date(2026, 11, 26, 1, 2, 3, 4000, time.UTC)
	name, topic := "ops", ""
	for _, v := range []any{
		&ChannelsResponse{Channels: []ChannelInfo{{ConversationID: "g:a", Name: "ops", Topic: "deploys \"now\"", CreatedAt: ts, Joined: true}, {ConversationID: "g:b", Name: "x", CreatedAt: ts}}, Next: "g:b"},
		&ChannelsResponse{},
		&ConversationChange{Name: &name, Topic: &topic},
		&RoleRequest{Role: RoleAdmin},
		&CreateConversationRequest{Type: Channel, Name: "ops", Topic: "deploys"},
		&HistoryResponse{Messages: []Message{{ConversationID: "g:a", SeqNo: 3, MessageID: "m", SenderID: "alice", Kind: KindAdded, Members: []string{"bob", "carol"}, Timestamp: ts}}},
	} {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, v, func(int) {}); err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		std, _ := json.Marshal(v)
		if got := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); string(got) != string(std) {
			t.Errorf("%T encodes differently:\nours %s\nstd  %s", v, got, std)
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

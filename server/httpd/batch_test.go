package httpd_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// join builds one message of several frames, one per line; a string is put in
// as it stands (a malformed line).
func join(t *testing.T, parts ...any) []byte {
	t.Helper()
	var msg []byte
	for _, p := range parts {
		switch p := p.(type) {
		case wire.Frame:
			b, err := wire.EncodeFrame(p)
			if err != nil {
				t.Fatal(err)
			}
			msg = wire.AppendFrame(msg, b)
		case string:
			msg = wire.AppendFrame(msg, []byte(p))
		}
	}
	return msg
}

// One client message with several frames: each line is handled on its own, in
// order; the bad ones get their error answers and do not stop the rest.
func TestBatchedClientFramesHandledInOrder(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv.URL, "alice"), register(t, srv.URL, "bob")
	a, b := connect(t, srv.URL, alice), connect(t, srv.URL, bob)
	conv := wire.DirectConversationID("alice", "bob")
	b.write(join(t,
		wire.Frame{Type: wire.TypeSend, ID: "s1", ConversationID: conv, MessageID: "m1", Content: "one"},
		`{"type":"send","id":"broken"`, // not JSON: an error without an id
		"",                             // an empty line: ignored
		wire.Frame{Type: wire.TypeSend, ID: "s2", ConversationID: conv, MessageID: "m2"}, // no content
		wire.Frame{Type: wire.TypeSend, ID: "s3", ConversationID: conv, MessageID: "m3", Content: "three"},
		wire.Frame{Type: wire.TypePing, ID: "p"},
	))
	sent := map[string]wire.Frame{}
	var direct []string // the answers the read loop gives at once: errors and pong, in line order
	for len(sent) < 2 || len(direct) < 3 {
		f := b.next()
		switch f.Type {
		case wire.TypeSent:
			sent[f.ID] = f
		case wire.TypeError:
			if f.Error.Code != wire.CodeInvalid {
				t.Fatalf("error %+v, want invalid", f.Error)
			}
			direct = append(direct, "error:"+f.ID)
		case wire.TypePong:
			direct = append(direct, "pong:"+f.ID)
		default:
			t.Fatalf("unexpected %+v", f)
		}
	}
	if want := []string{"error:", "error:s2", "pong:p"}; !slices.Equal(direct, want) {
		t.Fatalf("answers %q, want %q", direct, want)
	}
	if sent["s1"].SeqNo != 1 || sent["s3"].SeqNo != 2 {
		t.Fatalf("sent %+v, want s1 at seq 1 and s3 at seq 2", sent)
	}
	var got []string
	for len(got) < 2 {
		if f := a.next(); f.Type == wire.TypeMessage {
			got = append(got, f.Message.MessageID)
		}
	}
	if got[0] != "m1" || got[1] != "m3" {
		t.Fatalf("alice got %v, want m1, m3", got)
	}
}

// Frames queued together go out together: the catch-up of many pending
// messages arrives in messages of several frames each, none over the cap, and
// in order.
func TestServerBatchesQueuedFrames(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv.URL, "alice"), register(t, srv.URL, "bob")
	b := connect(t, srv.URL, bob)
	conv := wire.DirectConversationID("alice", "bob")
	const n = 200
	for i := 0; i < n; i += 20 {
		var parts []any
		for j := i + 1; j <= i+20; j++ {
			parts = append(parts, wire.Frame{Type: wire.TypeSend, ID: "s" + strconv.Itoa(j), ConversationID: conv,
				MessageID: "m" + strconv.Itoa(j), Content: "message " + strconv.Itoa(j)})
		}
		b.write(join(t, parts...))
	}
	for stored := 0; stored < n; {
		if f := b.next(); f.Type == wire.TypeSent {
			stored++
		} else if f.Type == wire.TypeError {
			t.Fatalf("send failed: %+v", f.Error)
		}
	}

	a := connect(t, srv.URL, alice) // alice was offline: all n are pending
	var seqs []int64
	most := len(a.rest) + 1 // the frames that came with hello
	for len(seqs) < n {
		var frames []wire.Frame
		if len(a.rest) > 0 {
			frames, a.rest = a.rest, nil
		} else {
			var data []byte
			frames, data = a.messageData()
			if len(frames) > 1 && len(data) > 32<<10 {
				t.Fatalf("a message of %d frames is %d bytes, over the 32 KiB cap", len(frames), len(data))
			}
			most = max(most, len(frames))
		}
		for _, f := range frames {
			if f.Type == wire.TypeMessage {
				seqs = append(seqs, f.Message.SeqNo)
			}
		}
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("message %d has seq %d: out of order", i, s)
		}
	}
	if most < 2 {
		t.Fatalf("every message carried one frame: the server did not batch %d queued frames", n)
	}
	t.Logf("the largest message carried %d frames", most)
}

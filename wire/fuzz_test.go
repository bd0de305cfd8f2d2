package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeFrame: the decoder must never panic, and whatever it accepts must
// survive a re-encode and decode unchanged. The input is also read as a batch
// message (frames one per line): every non-empty line is visited, in order, and
// the frames that decode survive a join, split and decode unchanged.
func FuzzDecodeFrame(f *testing.F) {
	var batch []byte
	for _, fr := range sampleFrames() {
		b, _ := EncodeFrame(fr)
		f.Add(b)
		batch = AppendFrame(batch, b)
	}
	f.Add(batch)
	f.Add([]byte(`{"type":"ping","id":"a"}` + "\n\n{\"type\":\n" + `{"type":"pong"}` + "\r\n \n"))
	f.Add([]byte(`{"type":"send","cursors":null,"seq_no":1e99}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkBatch(t, data)
		fr, err := DecodeFrame(data)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error is %T, want *Error", err)
			}
			return
		}
		b, err := EncodeFrame(fr)
		if err != nil {
			t.Fatalf("accepted frame does not encode: %v", err)
		}
		again, err := DecodeFrame(b)
		if err != nil {
			t.Fatalf("re-encoded frame rejected: %v\n%s", err, b)
		}
		b2, _ := EncodeFrame(again)
		if string(b) != string(b2) {
			t.Fatalf("unstable encoding:\n%s\n%s", b, b2)
		}
		// The generated codec speaks standard JSON: encoding/json reads what it
		// writes as the same frame, and what encoding/json writes for that frame
		// decodes to it too. (The bytes may differ in how a control character is
		// escaped: "\f" or "\u000c".)
		var std Frame
		if err := json.Unmarshal(b, &std); err != nil {
			t.Fatalf("encoding/json rejects an encoded frame: %v\n%s", err, b)
		}
		if !reflect.DeepEqual(std, again) {
			t.Fatalf("encoding/json reads a different frame:\nours %+v\nstd  %+v", again, std)
		}
		sb, _ := json.Marshal(std)
		if back, err := DecodeFrame(sb); err != nil || !reflect.DeepEqual(back, again) {
			t.Fatalf("encoding/json's encoding reads back differently (%v):\n%s\n%s", err, sb, b)
		}
	})
}

// checkBatch reads data as one message of frames.
func checkBatch(t *testing.T, data []byte) {
	var lines [][]byte
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		if len(bytes.Trim(l, " \t\r")) > 0 {
			lines = append(lines, l)
		}
	}
	var accepted []Frame
	var msg []byte
	i := 0
	for line := range Frames(data) {
		if i >= len(lines) || !bytes.Equal(line, lines[i]) {
			t.Fatalf("line %d is %q, want the %d non-empty lines %q", i, line, len(lines), lines)
		}
		i++
		fr, err := DecodeFrame(line)
		if err != nil {
			continue
		}
		b, err := EncodeFrame(fr)
		if err != nil {
			t.Fatalf("accepted frame does not encode: %v", err)
		}
		if bytes.IndexByte(b, FrameSeparator) >= 0 {
			t.Fatalf("encoded frame holds a newline: %q", b)
		}
		accepted = append(accepted, fr)
		msg = AppendFrame(msg, b)
	}
	if i != len(lines) {
		t.Fatalf("visited %d lines of %d", i, len(lines))
	}
	var again []Frame
	for line := range Frames(msg) {
		fr, err := DecodeFrame(line)
		if err != nil {
			t.Fatalf("re-encoded frame rejected: %v\n%s", err, line)
		}
		again = append(again, fr)
	}
	if len(again) != len(accepted) {
		t.Fatalf("joined %d frames, split %d", len(accepted), len(again))
	}
	for k := range again {
		a, _ := EncodeFrame(accepted[k])
		b, _ := EncodeFrame(again[k])
		if !bytes.Equal(a, b) {
			t.Fatalf("frame %d changed in the batch:\n%s\n%s", k, a, b)
		}
	}
}

// FuzzDecodeRequests covers the HTTP bodies the server decodes.
func FuzzDecodeRequests(f *testing.F) {
	f.Add([]byte(`{"message_id":"m1","content":"hi"}`))
	f.Add([]byte(`{"type":"group","name":"x","members":["a","b"]}`))
	f.Add([]byte(`{"user_id":"alice","password":"secret123"}`))
	f.Add([]byte(`{"type":"channel","name":"ops","topic":"deploys"}`))
	f.Add([]byte(`{"name":"ops","topic":""}`))
	f.Add([]byte(`{"role":"admin"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ch ConversationChange
		if err := DecodeJSON(data, &ch); err == nil && ch.Topic != nil {
			_ = ValidateTopic(*ch.Topic) // must not panic on anything decoded
		}
		var role RoleRequest
		_ = DecodeJSON(data, &role)
		var s SendRequest
		_ = DecodeJSON(data, &s)
		var c CreateConversationRequest
		_ = DecodeJSON(data, &c)
		var r RegisterRequest
		if err := DecodeJSON(data, &r); err == nil {
			if _, err := json.Marshal(r); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzDecodeInbox covers the inbox answer a client decodes, the offline
// copy's stale flag among it: whatever decodes encodes again and decodes to
// the same answer.
func FuzzDecodeInbox(f *testing.F) {
	f.Add([]byte(`{"conversations":[{"conversation_id":"dm:a:b","last_seq":3}]}`))
	f.Add([]byte(`{"conversations":[],"stale":true}`))
	f.Add([]byte(`{"conversations":null,"stale":false}`))
	f.Add([]byte(`{"stale":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var in InboxResponse
		if DecodeAnswer(data, &in) != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteJSON(&buf, &in, func(int) {}); err != nil {
			t.Fatal(err)
		}
		var back InboxResponse
		if err := DecodeAnswer(buf.Bytes(), &back); err != nil {
			t.Fatalf("%s does not decode: %v", buf.Bytes(), err)
		}
		if back.Stale != in.Stale || len(back.Conversations) != len(in.Conversations) {
			t.Fatalf("round trip changed the answer: %+v, then %+v", in, back)
		}
	})
}

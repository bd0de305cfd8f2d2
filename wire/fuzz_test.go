package wire

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeFrame: the decoder must never panic, and whatever it accepts must
// survive a re-encode and decode unchanged.
func FuzzDecodeFrame(f *testing.F) {
	for _, fr := range sampleFrames() {
		b, _ := EncodeFrame(fr)
		f.Add(b)
	}
	f.Add([]byte(`{"type":"send","cursors":null,"seq_no":1e99}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
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
	})
}

// FuzzDecodeRequests covers the HTTP bodies the server decodes.
func FuzzDecodeRequests(f *testing.F) {
	f.Add([]byte(`{"message_id":"m1","content":"hi"}`))
	f.Add([]byte(`{"type":"group","name":"x","members":["a","b"]}`))
	f.Add([]byte(`{"user_id":"alice","password":"secret123"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
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

package redis

import (
	"bytes"
	"slices"
	"testing"

	"github.com/chatterm/chat/server"
)

func TestEnvelopeRoundTrip(t *testing.T) {
	for _, env := range []server.Envelope{
		{},
		{UserIDs: []string{"ann"}, Frame: []byte(`{"type":"message"}`)},
		{UserIDs: []string{"", "bob", "ünï"}, Close: true},
	} {
		got, err := decodeEnvelope(encodeEnvelope(env))
		if err != nil || !slices.Equal(got.UserIDs, env.UserIDs) || !bytes.Equal(got.Frame, env.Frame) || got.Close != (len(env.Frame) == 0) {
			t.Errorf("round trip of %+v = %+v, %v", env, got, err)
		}
	}
}

// FuzzDecodeEnvelope: whatever arrives on the channel, decoding must not panic.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Add(encodeEnvelope(server.Envelope{UserIDs: []string{"a", "b"}, Frame: []byte("x")}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{2, 5, 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := decodeEnvelope(b)
		if err == nil {
			if again, err := decodeEnvelope(encodeEnvelope(env)); err != nil || !slices.Equal(again.UserIDs, env.UserIDs) {
				t.Fatalf("re-encoding %+v: %+v, %v", env, again, err)
			}
		}
	})
}

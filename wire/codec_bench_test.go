package wire

import (
	"testing"
	"time"
)

// BenchmarkFrameCodec: the frames every message costs (send in; sent, message,
// status out), encoded and decoded as the server and clients do.
//
//	go test -run '^$' -bench FrameCodec -benchmem ./wire
func BenchmarkFrameCodec(b *testing.B) {
	ts := time.Date(2026, 11, 21, 1, 2, 3, 456789000, time.UTC)
	frames := []Frame{
		{Type: TypeSend, ID: "r123", ConversationID: "dm:alice:bob", MessageID: "k3n5x7q9z2b4m6p8", Content: "a chat line of about the length people type, give or take a few words, ok"},
		{Type: TypeSent, ID: "r123", ConversationID: "dm:alice:bob", SeqNo: 123456, MessageID: "k3n5x7q9z2b4m6p8", Timestamp: ts},
		{Type: TypeMessage, Message: &Message{ConversationID: "dm:alice:bob", SeqNo: 123456, MessageID: "k3n5x7q9z2b4m6p8", SenderID: "alice",
			Content: "a chat line of about the length people type, give or take a few words, ok", Timestamp: ts}},
		{Type: TypeStatus, ConversationID: "dm:alice:bob", Status: &MemberStatus{UserID: "bob", LastDeliveredSeq: 123456, LastReadSeq: 123400}},
	}
	encoded := make([][]byte, len(frames))
	for i, f := range frames {
		encoded[i], _ = EncodeFrame(f)
	}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range frames {
				if _, err := EncodeFrame(f); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, data := range encoded {
				if _, err := DecodeFrame(data); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// Package wire is the chat protocol: every WebSocket frame, every HTTP request and
// response body, and every error code. Server and clients both encode and decode
// through this package and nowhere else, so the protocol has one definition.
//
// Field names follow the data model (docs/architecture.md): conversation_id,
// seq_no, message_id, before_seq, last_delivered_seq, last_read_seq.
package wire

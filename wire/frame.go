package wire

//go:generate go run github.com/mailru/easyjson/easyjson@v0.9.2 -all -no_std_marshalers frame.go

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/mailru/easyjson"
	"github.com/mailru/easyjson/jwriter"
)

// Frame types. Client → server: send, ack, read, sync, ping, typing. Server →
// client: hello, sent, message, status, synced, conversation, error, pong,
// typing.
const (
	TypeSend = "send" // store a message; answered by "sent" or "error" with the same id
	TypeAck  = "ack"  // cumulative delivery ack: every message up to seq_no is stored on the device
	TypeRead = "read" // the user has read up to seq_no
	TypeSync = "sync" // catch up after cursors; answered by messages then "synced"
	TypePing = "ping" // answered by "pong"
	// TypeTyping: the user is composing in conversation_id (client → server, at
	// most every few seconds while typing); the server passes it to the other
	// members' devices with user_id set. Never stored, never answered.
	TypeTyping = "typing"

	TypeHello        = "hello"        // first frame from the server: who you are
	TypeSent         = "sent"         // a send was stored durably: seq_no assigned
	TypeMessage      = "message"      // a message for this device (live, pending or sync)
	TypeStatus       = "status"       // a member's boundaries moved
	TypeSynced       = "synced"       // end of a sync answer
	TypeConversation = "conversation" // you were added to a conversation, or it changed
	TypeError        = "error"        // a request failed; id echoes it when it had one
	TypePong         = "pong"
	// TypeResync (protocol 2): live copies to this connection may have been
	// lost (the server's pub/sub or registry came back); sync every
	// conversation from its cursor. Pending rows cannot bring them: they are
	// per user, and another device of the user may have acked them.
	TypeResync = "resync"
	// TypeProfile: a user who shares a conversation with you changed their
	// display name or status (profile, as GET /v1/users/{id} gives it).
	// Older clients skip it, as they skip any frame they do not know.
	TypeProfile = "profile"
)

// ProtocolVersion is the version this package speaks, said in the server's
// hello. 2 added a send's ack_seq and first_try; a client uses ack_seq only
// when the hello says 2 or more (an older server would drop the ack it
// carries), while first_try is safe with any server (ignored by older ones).
// 3 added the membership events (IsMembershipKind, Message.Members) and
// channels (Conversation.Topic, type Channel); a version 2 client keeps an
// event of a kind it does not know without applying or showing it, so the
// server sends them to every client alike.
const ProtocolVersion = 3

// MaxFrameBytes bounds any frame a server reads, and any WebSocket message,
// whatever the number of frames in it. Message content has its own, smaller,
// configurable limit.
const MaxFrameBytes = 256 << 10

// Frame is one protocol frame; a WebSocket message carries one or several, one
// per line (see Frames). Fields are flat and optional so that one decode
// serves every type; Validate says which fields a type requires. Requests carry an
// id that the answer echoes; pushes have none.
type Frame struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`

	ConversationID string `json:"conversation_id,omitempty"`
	SeqNo          int64  `json:"seq_no,omitempty"`
	MessageID      string `json:"message_id,omitempty"`
	Content        string `json:"content,omitempty"`
	Attachment     string `json:"attachment,omitempty"` // send: a media_id
	// send: the attachment's name, type and size (SendRequest)
	AttachmentInfo *AttachmentInfo `json:"attachment_info,omitempty"`
	Kind           string          `json:"kind,omitempty"`       // send: an event (SendRequest)
	TargetSeq      int64           `json:"target_seq,omitempty"` // send: the message an event changes
	ReplyTo        int64           `json:"reply_to,omitempty"`   // send: the message quoted
	// send: this message_id has not been sent before (SendRequest.FirstTry).
	FirstTry bool `json:"first_try,omitempty"`
	// send (protocol 2): the sender's device has stored the conversation up to
	// here — the cumulative ack it would have sent, carried by the send so that
	// it costs no WebSocket message of its own. Negative is refused.
	AckSeq    int64     `json:"ack_seq,omitempty"`
	Timestamp time.Time `json:"timestamp,omitzero"`
	// sent: the mentions the server resolved in the message, as stored with
	// it (Message.Mentions), so the sender's cache holds them at once.
	Mentions []string `json:"mentions,omitempty"`

	// hello: the protocol version the server speaks (ProtocolVersion); absent
	// from servers before version 2.
	Protocol int `json:"protocol,omitempty"`
	// hello: the server's store identity, which changes when the store is
	// restored from a backup or rolled back. A client that cached messages
	// under another id reconciles its cache (docs/protocol.md, "Store
	// identity"). Absent from older servers; any printable ASCII, at most
	// MaxStoreIDBytes.
	StoreID string `json:"store_id,omitempty"`

	UserID  string        `json:"user_id,omitempty"`      // hello: who is connected
	Message *Message      `json:"message,omitempty"`      // message
	Status  *MemberStatus `json:"status,omitempty"`       // status (with ConversationID)
	Cursors []Cursor      `json:"cursors,omitempty"`      // sync
	More    bool          `json:"more,omitempty"`         // synced: call sync again for the rest
	Conv    *Conversation `json:"conversation,omitempty"` // conversation
	Error   *Error        `json:"error,omitempty"`        // error
	Profile *Profile      `json:"profile,omitempty"`      // profile
}

// Cursor says "this device has conversation_id up to seq_no".
type Cursor struct {
	ConversationID string `json:"conversation_id"`
	SeqNo          int64  `json:"seq_no"`
}

// MaxStoreIDBytes bounds a hello's store_id (the servers here send 32 hex
// digits).
const MaxStoreIDBytes = 64

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// MaxCursors bounds one sync frame.
const MaxCursors = 1000

// DecodeFrame parses and validates one frame. Any error is an *Error with
// CodeInvalid and says what is wrong; it never panics on any input.
func DecodeFrame(data []byte) (Frame, error) {
	var f Frame
	if len(data) > MaxFrameBytes {
		return f, Errorf(CodeTooLarge, "frame is %d bytes, the limit is %d", len(data), MaxFrameBytes)
	}
	// A WebSocket text message is UTF-8 (RFC 6455); say so rather than let a
	// broken byte travel on into stored content.
	if !utf8.Valid(data) {
		return f, Errorf(CodeInvalid, "frame is not valid UTF-8; send frames as UTF-8 JSON text")
	}
	// The generated decoder (frame_easyjson.go) does what encoding/json does for
	// Frame at a fraction of the cost: every frame of every message passes here,
	// on the server and in every client. Trailing data is an error, as before.
	if err := checkStringControls(data); err != nil {
		return f, err
	}
	if err := easyjson.Unmarshal(data, &f); err != nil {
		return Frame{}, Errorf(CodeInvalid, "frame is not valid JSON: %v", err)
	}
	if err := f.Validate(); err != nil {
		return f, err
	}
	return f, nil
}

// EncodeFrame marshals a frame. It cannot fail for frames built by this package's
// types, so callers may treat an error as a bug.
func EncodeFrame(f Frame) ([]byte, error) {
	// One allocation of about the right size, returned as is: the writer's own
	// growth from 128 bytes cost several allocations and a copy per frame, and a
	// flat 256 bytes over the content was twice what a "sent" answer takes. The
	// keys, quotes and numbers come to under 100 bytes, a timestamp to 40, a
	// message's keys, number and timestamp to 90 more, a status's to 40; a frame
	// that needs more (escapes, an error, a conversation) grows the buffer once.
	size := 100 + len(f.Type) + len(f.ID) + len(f.ConversationID) + len(f.MessageID) + len(f.Content) + len(f.Attachment) + len(f.UserID)
	if !f.Timestamp.IsZero() {
		size += 40
	}
	if m := f.Message; m != nil {
		size += 90 + len(m.ConversationID) + len(m.MessageID) + len(m.SenderID) + len(m.Content) + len(m.Attachment)
	}
	if st := f.Status; st != nil {
		size += 40 + len(st.UserID)
	}
	var w jwriter.Writer
	w.Buffer.Buf = make([]byte, 0, size)
	f.MarshalEasyJSON(&w)
	b, err := w.BuildBytes()
	if err != nil {
		return nil, fmt.Errorf("encode %s frame: %w", f.Type, err)
	}
	return b, nil
}

// Validate checks that a frame has what its type needs.
func (f Frame) Validate() error {
	switch f.Type {
	case TypeSend:
		if err := ValidateConversationID(f.ConversationID); err != nil {
			return err
		}
		if err := ValidateMessageID(f.MessageID); err != nil {
			return err
		}
		if err := f.SendRequest().Validate(); err != nil {
			return err
		}
		if f.AckSeq < 0 {
			return Errorf(CodeInvalid, "send: ack_seq must not be negative")
		}
	case TypeAck, TypeRead:
		if err := ValidateConversationID(f.ConversationID); err != nil {
			return err
		}
		if f.SeqNo <= 0 {
			return Errorf(CodeInvalid, "%s: seq_no must be a positive integer", f.Type)
		}
	case TypeSync:
		if len(f.Cursors) > MaxCursors {
			return Errorf(CodeInvalid, "sync: at most %d cursors", MaxCursors)
		}
		for _, c := range f.Cursors {
			if err := ValidateConversationID(c.ConversationID); err != nil {
				return err
			}
			if c.SeqNo < 0 {
				return Errorf(CodeInvalid, "sync: seq_no must not be negative")
			}
		}
	case TypeTyping:
		if err := ValidateConversationID(f.ConversationID); err != nil {
			return err
		}
	case TypePing, TypePong, TypeSynced, TypeResync:
	case TypeHello:
		if f.UserID == "" {
			return Errorf(CodeInvalid, "hello: user_id is missing")
		}
		if len(f.StoreID) > MaxStoreIDBytes || !printableASCII(f.StoreID) {
			return Errorf(CodeInvalid, "hello: store_id must be printable ASCII of at most %d bytes", MaxStoreIDBytes)
		}
	case TypeSent:
		if f.ConversationID == "" || f.SeqNo <= 0 || f.MessageID == "" {
			return Errorf(CodeInvalid, "sent: conversation_id, seq_no and message_id are required")
		}
		if err := ValidateResolvedMentions(f.Mentions); err != nil {
			return Errorf(CodeInvalid, "sent: %s", ErrorMessage(err))
		}
	case TypeMessage:
		if f.Message == nil || f.Message.ConversationID == "" || f.Message.SeqNo <= 0 {
			return Errorf(CodeInvalid, "message: message with conversation_id and seq_no is required")
		}
	case TypeStatus:
		if f.ConversationID == "" || f.Status == nil || f.Status.UserID == "" {
			return Errorf(CodeInvalid, "status: conversation_id and status.user_id are required")
		}
	case TypeConversation:
		if f.Conv == nil || f.Conv.ConversationID == "" {
			return Errorf(CodeInvalid, "conversation: conversation is required")
		}
	case TypeError:
		if f.Error == nil || f.Error.Code == "" {
			return Errorf(CodeInvalid, "error: error.code is required")
		}
	case TypeProfile:
		if f.Profile == nil || f.Profile.UserID == "" {
			return Errorf(CodeInvalid, "profile: profile.user_id is required")
		}
	case "":
		return Errorf(CodeInvalid, "frame has no type")
	default:
		return Errorf(CodeInvalid, "unknown frame type %q", truncate(f.Type, 32))
	}
	return nil
}

// ErrorFrame builds the error answer to a request (id may be empty).
func ErrorFrame(id string, err error) Frame {
	return Frame{Type: TypeError, ID: id, Error: AsError(err)}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

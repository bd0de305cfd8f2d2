package wire

import (
	"github.com/chatterm/chat/internal/termtext"
	"unicode/utf8"
)

// Kinds of events (Message.Kind); a message has none.
const (
	KindReaction = "reaction" // content: the sender's reaction now, "" for none
	KindEdit     = "edit"     // content: the new text
	KindDelete   = "delete"   // no content: the target is a tombstone from now on
)

// MaxReactionBytes bounds a reaction: one emoji, with its modifiers and
// joiners (the longest in Unicode's list, a kiss with two skin tones, is 35).
const MaxReactionBytes = 64

// DeletedPreview is the inbox line of a conversation whose last message was
// deleted.
const DeletedPreview = "message deleted"

// SendRequest is what a send frame asks for.
func (f Frame) SendRequest() SendRequest {
	return SendRequest{MessageID: f.MessageID, Content: f.Content, Attachment: f.Attachment, AttachmentInfo: f.AttachmentInfo,
		Kind: f.Kind, TargetSeq: f.TargetSeq, ReplyTo: f.ReplyTo, FirstTry: f.FirstTry}
}

// Validate checks the shape of a send: what a message or each kind of event
// must and must not carry. Whether the target exists and the sender may
// change it is the server's to say.
func (r SendRequest) Validate() error {
	if err := ValidateMessageID(r.MessageID); err != nil {
		return err
	}
	if r.Attachment != "" {
		if err := ValidateMediaID(r.Attachment); err != nil {
			return err
		}
	}
	if r.AttachmentInfo != nil {
		if r.Attachment == "" {
			return Errorf(CodeInvalid, "send: attachment_info describes an attachment; there is none")
		}
		if err := r.AttachmentInfo.Validate(); err != nil {
			return err
		}
	}
	if r.ReplyTo < 0 || r.TargetSeq < 0 {
		return Errorf(CodeInvalid, "send: reply_to and target_seq must not be negative")
	}
	if r.Kind == "" {
		if r.Content == "" && r.Attachment == "" {
			return Errorf(CodeInvalid, "send: content is empty")
		}
		if err := ValidateNotBlank("content", r.Content); err != nil {
			return err
		}
		if r.TargetSeq != 0 {
			return Errorf(CodeInvalid, "send: target_seq is for events (kind); a reply quotes with reply_to")
		}
		return nil
	}
	if IsMembershipKind(r.Kind) {
		return Errorf(CodeInvalid, "send: a %s event is recorded by the server when the group changes (members, join, rename, topic, role requests); it cannot be sent", r.Kind)
	}
	if r.TargetSeq == 0 {
		return Errorf(CodeInvalid, "send: a %s needs target_seq, the message it changes", r.Kind)
	}
	if r.Attachment != "" || r.ReplyTo != 0 {
		return Errorf(CodeInvalid, "send: a %s carries no attachment or reply_to", r.Kind)
	}
	switch r.Kind {
	case KindReaction:
		return ValidateReaction(r.Content)
	case KindEdit:
		if r.Content == "" {
			return Errorf(CodeInvalid, "send: an edit needs the new content; to remove a message, delete it")
		}
		if err := ValidateNotBlank("content", r.Content); err != nil {
			return err
		}
	case KindDelete:
		if r.Content != "" {
			return Errorf(CodeInvalid, "send: a delete carries no content")
		}
	default:
		return Errorf(CodeInvalid, "send: unknown kind %q (want %s, %s or %s)", truncate(r.Kind, 32), KindReaction, KindEdit, KindDelete)
	}
	return nil
}

// ValidateReaction checks a reaction: exactly one emoji (see isEmoji: a
// pictograph from Unicode's emoji data with its variation selector, skin tone
// and ZWJ-joined companions, a flag or a keycap); "" takes a reaction away.
// Symbols that are not emoji (⌘), letters ("hi"), two emoji, blank and
// zero-width strings are refused.
func ValidateReaction(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > MaxReactionBytes || !utf8.ValidString(s) {
		return Errorf(CodeInvalid, "a reaction is one emoji (at most %d bytes)", MaxReactionBytes)
	}
	if termtext.Blank(s) {
		return Errorf(CodeBlank, "a reaction is one emoji; this one shows as blank")
	}
	if !isEmoji(s) {
		return Errorf(CodeInvalid, "a reaction is one emoji, not %q", truncate(s, 32))
	}
	return nil
}

// Preview is the inbox line for m: its text, a mark for an attachment alone,
// or DeletedPreview for a deleted message.
func (m Message) Preview() string {
	if m.Deleted || m.Kind == KindDelete {
		return DeletedPreview
	}
	return Preview(m.Content, m.Attachment)
}

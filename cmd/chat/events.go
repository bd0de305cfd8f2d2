package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chatterm/chat/wire"
)

const reactUsage = `
Usage: chat react (--to USER | --group ID) SEQ EMOJI

Reacts to message SEQ with EMOJI. One reaction per member per message: a new
one replaces yours, the same one again takes it back. Prints the seq_no of the
reaction (an event in the conversation, like a message).

Examples:
  chat react --to bob 42 👍
  chat react --group g:7f3k2 7 🎉
`

const editUsage = `
Usage: chat edit (--to USER | --group ID) SEQ TEXT...

Replaces the text of your message SEQ; members see it marked "edited". The
text is the arguments joined by spaces, or standard input with "-".

Examples:
  chat edit --to bob 42 "the build is green (for real)"
`

const deleteUsage = `
Usage: chat delete (--to USER | --group ID) SEQ

Deletes message SEQ for everyone: its text and attachment are gone from the
server (its cold tier too) and every member sees a tombstone. Your own
messages; in a group, its admins may delete any.

Examples:
  chat delete --group g:7f3k2 7
`

func (a *app) runReact(ctx context.Context, args []string) error {
	return a.runEvent(ctx, "react", reactUsage, wire.KindReaction, args)
}

func (a *app) runEdit(ctx context.Context, args []string) error {
	return a.runEvent(ctx, "edit", editUsage, wire.KindEdit, args)
}

func (a *app) runDelete(ctx context.Context, args []string) error {
	return a.runEvent(ctx, "delete", deleteUsage, wire.KindDelete, args)
}

// runEvent sends one event on message SEQ: what react, edit and delete share.
func (a *app) runEvent(ctx context.Context, name, usage, kind string, args []string) error {
	fs := a.flags(name, usage)
	to := fs.String("to", "", "the direct conversation with `USER`")
	group := fs.String("group", "", "conversation `ID` (g:... or dm:...)")
	asJSON := fs.Bool("json", false, `print {"conversation_id","seq_no","message_id","timestamp"}`)
	messageID := fs.String("message-id", "", "message `ID` for idempotent retries")
	timeout := fs.Duration("timeout", time.Minute, "how long the request may take")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("which message? give its seq_no (chat history shows them as #N)")
	}
	seq, err := strconv.ParseInt(strings.TrimPrefix(pos[0], "#"), 10, 64)
	if err != nil || seq < 1 {
		return usagef("%q is not a seq_no (a positive number, as chat history shows it: #N)", pos[0])
	}
	req := wire.SendRequest{MessageID: *messageID, Kind: kind, TargetSeq: seq}
	rest := pos[1:]
	switch kind {
	case wire.KindReaction:
		if len(rest) != 1 {
			return usagef("give one emoji after the seq_no")
		}
		req.Content = rest[0]
	case wire.KindEdit:
		if len(rest) == 1 && rest[0] == "-" {
			b, err := readAllLimited(a.stdin)
			if err != nil {
				return err
			}
			rest = []string{strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")}
		}
		req.Content = strings.Join(rest, " ")
		if strings.TrimSpace(req.Content) == "" {
			return usagef("give the new text after the seq_no")
		}
	case wire.KindDelete:
		if len(rest) > 0 {
			return usagef("delete takes a seq_no only, not %q", strings.Join(rest, " "))
		}
	}
	if req.MessageID == "" {
		req.MessageID = wire.NewMessageID()
	}
	if err := req.Validate(); err != nil {
		return usagef("%s", wire.ErrorMessage(err))
	}
	api, acct, err := a.login()
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	conv, err := target(rctx, api, acct, "--to", *to, *group, true)
	if err != nil {
		return err
	}
	resp, err := api.SendNow(rctx, conv, req)
	if err != nil {
		return sendFailed(err, name, "run it")
	}
	if *asJSON {
		return json.NewEncoder(a.stdout).Encode(resp)
	}
	if kind == wire.KindReaction && resp.Content == "" {
		fmt.Fprintf(a.stderr, "(the same reaction again: yours on #%d is taken back)\n", seq)
	}
	_, err = fmt.Fprintln(a.stdout, resp.SeqNo)
	return err
}

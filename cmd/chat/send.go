package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

const sendUsage = `
Usage: chat send (--to USER | --group ID) [flags] [TEXT...]

Sends a message and prints its seq_no once the server has stored it (exit 0
means stored). The text is the arguments joined by spaces; with no arguments,
or the argument "-", it is standard input (one trailing newline dropped).
--lines sends one message per input line, in order, as the lines arrive; empty
lines are skipped.

--message-id makes a retried script idempotent: the server stores a message id
once and answers a repeat with the first answer. With --lines, line N gets
ID-N. The default is a fresh id per message.

Through an outage the message is resent with the same id until --timeout;
if it runs out when the message may be stored, the error names the
--message-id to send it again with (never a fresh one: that stores a copy).

--attach FILE uploads the file and sends it as the message's attachment; the
text is then optional (only "-" reads it from standard input).

--reply-to SEQ quotes message SEQ (with --lines, every line does).

--wait delivered|read waits, after the send, until every other member's
boundary has passed the (last) message; --timeout bounds the wait (exit 1 when
it runs out, with the seq_no already printed).

Examples:
  chat send --to bob "the build is green"
  git log -1 --format=%s | chat send --group g:7f3k2
  tail -f app.log | grep ERROR | chat send --to oncall --lines
  chat send --to bob --message-id deploy-42 --json "deploying v42"
  chat send --to bob --wait read --timeout 10m "please approve"
  chat send --group g:7f3k2 --attach report.pdf "this week's report"
  chat send --to bob --reply-to 42 "agreed"
`

// readAllLimited reads a message from standard input. The server's limit is
// far lower; this only keeps a wrong pipe (a disk image, say) from filling
// memory before it refuses.
func readAllLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxStdinBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read standard input: %w", err)
	}
	if len(b) > maxStdinBytes {
		return nil, usagef("standard input is over %d MiB; send a smaller message, or use --lines", maxStdinBytes>>20)
	}
	return b, nil
}

func (a *app) runSend(ctx context.Context, args []string) error {
	fs := a.flags("send", sendUsage)
	to := fs.String("to", "", "send to `USER` (a direct conversation)")
	group := fs.String("group", "", "send to conversation `ID` (g:... or dm:...)")
	lines := fs.Bool("lines", false, "one message per input line")
	asJSON := fs.Bool("json", false, `print {"conversation_id","seq_no","message_id","timestamp"} per message`)
	messageID := fs.String("message-id", "", "message `ID` for idempotent retries (with --lines: ID-N)")
	wait := fs.String("wait", "", "wait until the message is `MODE`: delivered or read")
	timeout := fs.Duration("timeout", time.Minute, "how long each message's send (resends included) and --wait may take")
	attach := fs.String("attach", "", "upload `FILE` and send it as the message's attachment (the text is then optional)")
	replyTo := fs.Int64("reply-to", 0, "quote message `SEQ` (a reply)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *wait != "" && *wait != "delivered" && *wait != "read" {
		return usagef("--wait must be delivered or read, not %q", *wait)
	}
	if *timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	if *messageID != "" {
		probe := *messageID
		if *lines {
			probe += "-1000000"
		}
		if err := wire.ValidateMessageID(probe); err != nil {
			return usagef("--message-id: %s", wire.ErrorMessage(err))
		}
	}
	if *replyTo < 0 {
		return usagef("--reply-to must be a seq_no (a positive number)")
	}
	if *attach != "" && *lines {
		return usagef("--attach goes with one message, not --lines")
	}
	// With an attachment the text is optional: only "-" reads standard input.
	fromStdin := len(pos) == 0 && *attach == "" || len(pos) == 1 && pos[0] == "-"
	var file *os.File
	if *attach != "" {
		if file, err = os.Open(*attach); err != nil {
			return usagef("--attach: %v", err)
		}
		defer file.Close()
	}
	if fromStdin {
		if _, tty := a.stdinTerminal(); tty {
			fmt.Fprintln(a.stderr, "(reading the message from the terminal; end it with Ctrl-D)")
		}
	}
	api, acct, err := a.login()
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, *timeout)
	conv, err := target(rctx, api, acct, "--to", *to, *group, true)
	// No request to create a direct conversation first: its first message creates
	// it, and a message to an unknown user gets the clear "no user" answer.
	cancel()
	if err != nil {
		return err
	}

	attachment := ""
	var attachmentInfo *wire.AttachmentInfo
	if file != nil {
		uctx, cancel := context.WithTimeout(ctx, *timeout)
		attachment, attachmentInfo, err = upload(uctx, api, file)
		cancel()
		if err != nil {
			return err
		}
	}

	var last wire.SendResponse
	send := func(n int, content string) error {
		id := *messageID
		switch {
		case id == "":
			id = wire.NewMessageID()
		case *lines:
			id += "-" + strconv.Itoa(n)
		}
		rctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		resp, err := api.SendNow(rctx, conv, wire.SendRequest{MessageID: id, Content: content, Attachment: attachment, AttachmentInfo: attachmentInfo, ReplyTo: *replyTo})
		if err != nil {
			return sendFailed(err, "message", "send it")
		}
		last = resp
		if *asJSON {
			return json.NewEncoder(a.stdout).Encode(resp)
		}
		_, err = fmt.Fprintln(a.stdout, resp.SeqNo)
		return err
	}

	switch {
	case *lines:
		var r io.Reader = strings.NewReader(strings.Join(pos, " "))
		if fromStdin {
			r = a.stdin
		}
		br := bufio.NewReader(r)
		sent := 0
		for n := 1; ; n++ {
			line, rerr := interruptible(ctx, func() (string, error) { return readLine(br, maxStdinBytes) })
			if ctx.Err() != nil {
				return ctx.Err() // Ctrl-C while waiting for a line: the lines before it are sent
			}
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				return rerr
			}
			line = strings.TrimRight(line, "\r\n")
			if line != "" {
				if err := send(n, line); err != nil {
					return err
				}
				sent++
			}
			if rerr != nil {
				break
			}
		}
		if sent == 0 {
			return usagef("nothing to send: the input has no non-empty line")
		}
	default:
		content := strings.Join(pos, " ")
		if fromStdin {
			// Ctrl-C while the text is typed (or piped) sends nothing.
			b, err := interruptible(ctx, func() ([]byte, error) { return readAllLimited(a.stdin) })
			if err != nil {
				return err
			}
			content = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		}
		if content == "" && attachment == "" {
			return usagef("nothing to send: the message is empty")
		}
		if err := send(1, content); err != nil {
			return err
		}
	}

	if *wait == "" {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	err = client.WaitPassed(wctx, api, conv, last.SeqNo, *wait == "read")
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("stored as seq_no %d but not %s within %s; wait longer with --timeout", last.SeqNo, *wait, *timeout)
	}
	return asTarget(err)
}

// upload sends a file for an attachment, with its type from the name's
// extension, else from its first bytes; it returns the media_id.
func upload(ctx context.Context, api *client.API, f *os.File) (string, *wire.AttachmentInfo, error) {
	id, info, err := api.UploadFile(ctx, f)
	if err != nil {
		return "", nil, fmt.Errorf("--attach: %w", err)
	}
	return id, &info, nil
}

// readLine reads one line (with its newline, if any) of at most limit bytes;
// io.EOF comes with the last line when it has no newline.
func readLine(br *bufio.Reader, limit int) (string, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > limit {
			return "", usagef("an input line is over %d MiB", limit>>20)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read standard input: %w", err)
		}
		return string(b), err
	}
}

// maxStdinBytes bounds a message read whole from standard input.
const maxStdinBytes = 4 << 20

// sendFailed is the error for a send (what: "message", "reaction"...) that
// failed. One given up on with its outcome unknown says how to settle it
// without a second copy (resend: "send it", "run it"), never "try again"
// alone: a fresh message_id would store it twice.
func sendFailed(err error, what, resend string) error {
	var ms *client.MaybeStoredError
	if !errors.As(err, &ms) {
		return asTarget(err)
	}
	cause := ms.Err.Error()
	var we *wire.Error
	if errors.As(ms.Err, &we) {
		cause = string(we.Code) + ": " + we.Message
	}
	if errors.Is(err, context.Canceled) {
		cause = "interrupted"
	}
	return &maybeStored{err: err, msg: fmt.Sprintf("the %s may be stored (%s): %s again with --message-id %s to store it once",
		what, cause, resend, ms.MessageID)}
}

// maybeStored is a send's failure whose message is final (describe adds no
// hint of its own to it).
type maybeStored struct {
	err error
	msg string
}

func (e *maybeStored) Error() string { return e.msg }
func (e *maybeStored) Unwrap() error { return e.err }

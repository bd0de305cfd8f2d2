package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/wire"
)

// echoHandler is the baseline: the same WebSocket library and settings as the
// chat server's transport, with no persistence and no logic — every frame goes
// straight back. What it sustains is what this machine can do at all.
func echoHandler() (http.Handler, error) {
	hello, err := wire.EncodeFrame(wire.Frame{Type: wire.TypeHello, UserID: "echo"})
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sock, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer sock.CloseNow()
		sock.SetReadLimit(wire.MaxFrameBytes)
		// I/O as the chat server's transport does it (server/httpd/ws.go): a
		// context that is never cancelled, and the socket closed when the
		// request's ends, so the baseline does not pay a timer per call that the
		// server does not.
		ctx := context.WithoutCancel(r.Context())
		stop := context.AfterFunc(r.Context(), func() { sock.CloseNow() })
		defer stop()
		// A hello first, like the chat server, so the bench dials both the same way.
		if err := sock.Write(ctx, websocket.MessageText, hello); err != nil {
			return
		}
		for {
			typ, data, err := sock.Read(ctx)
			if err != nil {
				return
			}
			if err := sock.Write(ctx, typ, data); err != nil {
				return
			}
		}
	}), nil
}

// startEcho serves the echo from this process on a loopback port.
func startEcho() (url string, stop func(), err error) {
	h, err := echoHandler()
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: h}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// startEchoTarget starts the echo as a child process, or in this process
// with --inproc (then its CPU is counted with the bench's, as the chat
// server's is).
func (b *bench) startEchoTarget() (*target, error) {
	if b.inproc {
		url, stop, err := startEcho()
		if err != nil {
			return nil, err
		}
		return &target{url: url, pid: os.Getpid(), self: true, stop: func() error { stop(); return nil }}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return startChild(exe, []string{"echo-serve"})
}

// echoServe is `chatbench echo-serve`: the echo in a process of its own, for
// the open-loop runs that read its CPU per message. It prints its URL and
// runs until SIGTERM.
func echoServe(stdout io.Writer) error {
	raiseFileLimit()
	url, stopEcho, err := startEcho()
	if err != nil {
		return err
	}
	defer stopEcho()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Fprintf(stdout, "listening %s\n", url)
	<-ctx.Done()
	return nil
}

// echo drives the echo server exactly as throughput drives the chat server: the
// same users, window and send frames, each answered by its own echo; once
// with one frame per WebSocket message, and once with frames joined as
// --client-batch joins them, so each chat rate has a like-for-like baseline.
func (b *bench) echo(ctx context.Context) error {
	url, stop, err := startEcho()
	if err != nil {
		return err
	}
	defer stop()
	peers := make([]*peer, b.users)
	for i := range peers {
		peers[i] = &peer{idx: i, user: "echo" + string(rune('a'+i%26)), token: "none", conv: wire.DirectConversationID("echoa", "echob"), sends: true, recipients: 0}
	}
	if err := b.connect(ctx, &target{url: url}, peers); err != nil {
		return err
	}
	r := runChat(ctx, peers, chatOpts{window: b.window, size: b.size, duration: b.duration, ackInterval: -1})
	b.report.Scenarios["echo"] = r
	b.row("echo", "messages/s", r.Rate, "msg/s")
	b.row("echo", "round trip p50", r.Latency.P50, "ms")
	b.row("echo", "round trip p99", r.Latency.P99, "ms")
	if err := echoErr(r); err != nil {
		return err
	}
	// Frames joined as the throughput scenario joins them (--client-batch):
	// the like-for-like baseline of its batched rate.
	if b.batch > 1 {
		if err := b.connect(ctx, &target{url: url}, peers); err != nil {
			return err
		}
		rb := runChat(ctx, peers, chatOpts{window: b.window, size: b.size, duration: b.duration, ackInterval: -1, batch: b.batch})
		b.report.Scenarios["echo_joined"] = rb
		b.row("echo", joinedMetric(b.batch), rb.Rate, "msg/s")
		if err := echoErr(rb); err != nil {
			return err
		}
	}
	// The same with one message in flight per user: what the machine can do when
	// nothing can be batched, as in the latency scenario, where each chat message
	// costs four or five WebSocket messages (send, sent, delivery, ack, status)
	// where an echo costs two.
	if err := b.connect(ctx, &target{url: url}, peers); err != nil {
		return err
	}
	r1 := runChat(ctx, peers, chatOpts{window: 1, size: b.size, duration: b.duration, ackInterval: -1})
	b.report.Scenarios["echo_window_1"] = r1
	b.row("echo", "messages/s, window 1", r1.Rate, "msg/s")
	b.row("echo", "round trip p99, window 1", r1.Latency.P99, "ms")
	if err := echoErr(r1); err != nil {
		return err
	}
	return b.echoOpenLoop(ctx, peers)
}

// echoOpenLoop offers the echo the latency scenario's rates (--rate, --rates)
// the way latency offers them to the chat server, the echo in a process of its
// own: its CPU per message at a rate is the floor under the chat server's at
// the same rate, two WebSocket messages per message where a chat message takes
// three (send, sent, delivery).
func (b *bench) echoOpenLoop(ctx context.Context, peers []*peer) error {
	rates := b.offeredRates()
	if len(rates) == 0 {
		return nil
	}
	t, err := b.startEchoTarget()
	if err != nil {
		return err
	}
	defer t.stop()
	var results []ChatResult
	for _, rate := range rates {
		if err := b.connect(ctx, t, peers); err != nil {
			return err
		}
		before, _ := b.readProc(ctx, t)
		r := runChat(ctx, peers, chatOpts{window: 1024, size: b.size, duration: b.duration, rate: rate, ackInterval: -1, batch: b.batch})
		after, _ := b.readProc(ctx, t)
		results = append(results, r)
		name := "echo@" + strconv.FormatFloat(rate, 'f', 0, 64)
		b.row(name, "achieved", r.Rate, "msg/s")
		b.row(name, "round trip p99", r.Latency.P99, "ms")
		b.cpuRows(name, before, after, r.Delivered)
		if err := echoErr(r); err != nil {
			return fmt.Errorf("at %.0f/s: %w", rate, err)
		}
	}
	b.report.Scenarios["echo_open_loop"] = results
	return nil
}

func echoErr(r ChatResult) error {
	if r.Errors > 0 {
		return errors.New(r.FirstErr)
	}
	if r.Delivered == 0 {
		return errors.New("no echo came back")
	}
	return nil
}

// joinedMetric names the rate of a run whose clients join up to batch frames
// into one WebSocket message.
func joinedMetric(batch int) string {
	return fmt.Sprintf("messages/s, frames joined up to %d", batch)
}

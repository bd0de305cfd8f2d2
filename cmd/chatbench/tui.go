package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// tuiWarmup starts come first and are not counted (the first ones read the
// binary and the cache from disk).
const tuiWarmup = 2

// tuiConversations is how many conversations the cached messages are spread
// over, as in docs/tui.md's measurement.
const tuiConversations = 500

// tuiServer is where the seeded login points: a port nothing answers on, so the
// TUI paints from its cache alone, as on a train.
const tuiServer = "http://127.0.0.1:9"

// TUIResult is the tui scenario's measurement.
type TUIResult struct {
	Binary        string      `json:"binary"`
	Messages      int         `json:"messages"`
	Conversations int         `json:"conversations"`
	Runs          int         `json:"runs"`
	InBinary      Percentiles `json:"start_to_inbox_in_binary"`
	OnScreen      Percentiles `json:"start_to_inbox_on_screen"`
	Baseline      Percentiles `json:"start_to_shell_echo_on_screen"`
}

// tui measures the target "the TUI paints its inbox from cache in under 50 ms":
// the real chat binary started in a tmux pane on a home whose cache holds
// --tui-messages messages, again and again. Two figures per start: the binary's
// own (its log's since_start when the inbox read from the cache reaches the
// model; the paint follows in the next frame), and the wall clock from asking
// tmux for the pane to the newest conversation showing in it, which adds
// process and terminal start-up and the polling of the pane. What tmux and the
// polling cost alone is measured beside it, with a shell that prints a word.
func (b *bench) tui(ctx context.Context) error {
	bin, tmux, err := b.chatInTmux("tui")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(b.tmp, "chatbench-tui-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	convs := min(tuiConversations, b.tuiMessages)
	t0 := time.Now()
	if err := seedTUICache(ctx, home, convs, b.tuiMessages); err != nil {
		return fmt.Errorf("seed the cache: %w", err)
	}
	b.logf("seeded a cache of %d messages in %d conversations in %.1fs", b.tuiMessages, convs, time.Since(t0).Seconds())

	// A tmux server of our own, its socket in our directory (removed with it:
	// tmux leaves the socket file behind when its server is killed).
	socket := filepath.Join(dir, "tmux.sock")
	defer exec.Command(tmux, "-S", socket, "kill-server").Run()
	// A session that lives through the whole run keeps the server up between
	// starts: a tmux server exits with its last session, and a start that races
	// that exit fails ("server exited unexpectedly").
	if out, err := exec.CommandContext(ctx, tmux, "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "keep", "sleep", "86400").CombinedOutput(); err != nil {
		return fmt.Errorf("start a tmux server: %w: %s", err, bytes.TrimSpace(out))
	}
	newest := tuiPeer(convs - 1) // the last conversation written is the top of the inbox
	logPath := filepath.Join(home, "tui.log")
	// pane starts cmd in a new tmux pane and says how long until the pane shows want.
	pane := func(session, want string, cmd ...string) (time.Duration, error) {
		start := time.Now()
		args := append([]string{"-S", socket, "new-session", "-d", "-s", session, "-x", "100", "-y", "30"}, cmd...)
		if out, err := exec.CommandContext(ctx, tmux, args...).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("start %s in tmux: %w: %s", cmd[0], err, bytes.TrimSpace(out))
		}
		err := waitForPane(ctx, tmux, socket, session, want, 10*time.Second)
		took := time.Since(start)
		exec.Command(tmux, "-S", socket, "kill-session", "-t", session).Run()
		return took, err
	}
	inBinary, onScreen, baseline := newHist(), newHist(), newHist()
	for i := range tuiWarmup + b.tuiRuns {
		screen, err := pane(fmt.Sprintf("chat%d", i), newest,
			"env", "-u", "CHAT_SERVER", "-u", "CHAT_TOKEN", "TERM=xterm-256color", "CHAT_HOME="+home, bin)
		if err != nil {
			return err
		}
		// What tmux and the polling cost alone: a shell that prints one word.
		shell, err := pane(fmt.Sprintf("sh%d", i), "ready", "sh", "-c", "echo ready; exec sleep 60")
		if err != nil {
			return err
		}
		loads, own, err := inboxLoads(logPath)
		if err != nil {
			return err
		}
		if loads != i+1 {
			return fmt.Errorf("%s: %d \"inbox loaded from cache\" lines after %d starts", logPath, loads, i+1)
		}
		if i >= tuiWarmup {
			inBinary.record(0, own)
			onScreen.record(0, screen)
			baseline.record(0, shell)
		}
	}
	r := TUIResult{Binary: bin, Messages: b.tuiMessages, Conversations: convs, Runs: b.tuiRuns,
		InBinary: inBinary.percentiles(), OnScreen: onScreen.percentiles(), Baseline: baseline.percentiles()}
	b.report.Scenarios["tui"] = r
	name := fmt.Sprintf("tui (%d cached)", r.Messages)
	// The target is judged on what a user sees: the wall clock, start-up included.
	b.target(name, "new pane to inbox on screen p50", r.OnScreen.P50, "ms", "< 50", r.OnScreen.P50 < 50)
	b.row(name, "new pane to inbox on screen p99", r.OnScreen.P99, "ms")
	b.row(name, "in the binary: start to inbox read p50", r.InBinary.P50, "ms")
	b.row(name, "in the binary: start to inbox read p99", r.InBinary.P99, "ms")
	b.row(name, "tmux alone: new pane to a shell's echo p50", r.Baseline.P50, "ms")
	return nil
}

func tuiPeer(i int) string { return fmt.Sprintf("peer%d", i) }

// seedTUICache writes a home with a login (to tuiServer) and a cache of n
// messages spread evenly over convs direct conversations, the newest
// conversation last.
func seedTUICache(ctx context.Context, home string, convs, n int) error {
	const user = "tuibench"
	cfg := client.Config{Home: home, Server: tuiServer}
	if err := cfg.SaveAccount(client.Account{Server: tuiServer, UserID: user, Token: "seeded-token"}); err != nil {
		return err
	}
	path, err := cfg.CachePath(tuiServer, user)
	if err != nil {
		return err
	}
	st, err := localstore.Open(ctx, path, localstore.Options{UserID: user})
	if err != nil {
		return err
	}
	defer st.Close()
	base := time.Now().Add(-time.Duration(n) * time.Second)
	batch := make([]wire.Message, 0, 1000)
	written := 0
	for c := range convs {
		peer := tuiPeer(c)
		conv := wire.DirectConversationID(user, peer)
		per := n / convs
		if c < n%convs {
			per++
		}
		for i := 1; i <= per; i++ {
			written++
			sender := peer
			if i%3 == 0 {
				sender = user
			}
			batch = append(batch, wire.Message{ConversationID: conv, SeqNo: int64(i), MessageID: fmt.Sprintf("%s-%d", peer, i), SenderID: sender,
				Content:   fmt.Sprintf("message %d of %s: some words to make it look like a chat line", i, peer),
				Timestamp: base.Add(time.Duration(written) * time.Second)})
			if len(batch) == cap(batch) || written == n {
				if _, err := st.PutMessages(ctx, batch...); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
	}
	return nil
}

// waitForPane polls the pane until it shows want.
func waitForPane(ctx context.Context, tmux, socket, session, want string, within time.Duration) error {
	start := time.Now()
	for {
		out, err := exec.CommandContext(ctx, tmux, "-S", socket, "capture-pane", "-p", "-t", session).Output()
		if err == nil && strings.Contains(string(out), want) {
			return nil
		}
		if time.Since(start) > within {
			return fmt.Errorf("chat did not show %q in %v; the pane holds:\n%s", want, within, out)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(time.Millisecond)
	}
}

// inboxLoads counts the "inbox loaded from cache" lines of the TUI's log
// (tui/tui.go writes one per start) and reads the last one's since_start.
func inboxLoads(path string) (int, time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var n int
	var last string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `msg="inbox loaded from cache"`) {
			n, last = n+1, sc.Text()
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	_, v, ok := strings.Cut(last, "since_start=")
	if !ok {
		return 0, 0, fmt.Errorf("%s has no \"inbox loaded from cache\" line with since_start", path)
	}
	v, _, _ = strings.Cut(v, " ")
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: since_start %q: %w", path, v, err)
	}
	return n, d, nil
}

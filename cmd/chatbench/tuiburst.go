package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// The tui-burst scenario's shape: the terminal is 120×40 (the chat with the
// conversation list beside it), the group has 10 members, all online.
const (
	burstCols, burstRows = 120, 40
	burstGroupSize       = 10
	burstWindow          = 64 // sends in flight from the sender
	// burstSettle is how long the CPU is still counted after the last
	// message is on screen: the read report, the acks and the frame after.
	burstSettle = time.Second
	burstPoll   = 10 * time.Millisecond // how often the pane is read
)

// TUIBurstCase is one measurement: a conversation kind, what the TUI shows,
// and how the messages came.
type TUIBurstCase struct {
	Conversation string  `json:"conversation"` // direct, group of 10
	View         string  `json:"view"`         // chat open, inbox shown, chat tail
	Load         string  `json:"load"`         // burst, steady
	Messages     int     `json:"messages"`
	SentPerSec   float64 `json:"sent_per_sec"` // as the server stored them
	CPUPerMsgUS  float64 `json:"cpu_per_message_us"`
	LagMS        float64 `json:"last_stored_to_screen_ms"`
}

// TUIBurstResult is the tui-burst scenario's measurement.
type TUIBurstResult struct {
	Binary       string         `json:"binary"`
	History      int            `json:"history"` // messages in each conversation before the runs
	LoadedAll    bool           `json:"loaded_all"`
	IdlePercent  float64        `json:"idle_cpu_percent_of_a_core"`
	IdleSeconds  float64        `json:"idle_seconds"`
	IdleMore     []float64      `json:"idle_more_percent,omitempty"` // --tui-burst-idle-more, in order
	Cases        []TUIBurstCase `json:"cases"`
	LoadAverage1 string         `json:"load_average_1m"` // the machine's, when the runs ended
}

// tuiBurst measures what incoming messages cost the real chat TUI, from
// outside: the real server on loopback, the real `chat` in a tmux pane logged
// in as one user, another user sending into a direct conversation and into a
// group of 10 whose other members are all online and acking. Each case sends
// --tui-burst-messages messages, as fast as the server stores them (burst) or
// at --tui-burst-rate (steady), and reads the process's CPU (the sum over its
// threads in /proc/PID/task/*/schedstat) from the first send until
// burstSettle after the last message is on screen (tmux capture-pane, read
// every burstPoll), less what the process spends idle in as long. Cases:
// the chat open, the inbox shown, and `chat tail` in a pane of its own.
func (b *bench) tuiBurst(ctx context.Context) error {
	bin, tmux, err := b.chatInTmux("tui-burst")
	if err != nil {
		return err
	}
	return b.withTarget(ctx, "tui-burst", func(t *target) error { return b.tuiBurstOn(ctx, t, bin, tmux) })
}

func (b *bench) tuiBurstOn(ctx context.Context, t *target, bin, tmux string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	names := b.userNames("tb", burstGroupSize)
	me, sender := names[0], names[1]
	a := &api{base: t.url, hc: b.dial.api}
	tokens, err := a.register(ctx, names)
	if err != nil {
		return err
	}
	direct, err := a.createConversation(ctx, tokens[1], wire.CreateConversationRequest{Type: wire.Direct, Members: []string{me}})
	if err != nil {
		return fmt.Errorf("create the direct conversation: %w", err)
	}
	groupName := "tbgroup" + b.runID
	group, err := a.createConversation(ctx, tokens[1], wire.CreateConversationRequest{Type: wire.Group, Name: groupName,
		Members: append([]string{me}, names[2:]...)})
	if err != nil {
		return fmt.Errorf("create the group: %w", err)
	}
	// The group's other members, online and acking what they get as the chat
	// client does: cumulatively, once per client.DefaultAckDelay.
	members, err := b.dial.dialAll(ctx, t.url, tokens[2:], 8)
	if err != nil {
		return err
	}
	defer closeAll(members)
	for _, c := range members {
		go ackLikeAClient(ctx, c, client.DefaultAckDelay, c.write)
	}
	out, err := b.dial.dial(ctx, t.url, tokens[1])
	if err != nil {
		return err
	}
	defer out.sock.CloseNow()
	snd := newBurstSender(ctx, out)

	if h := b.tuiBurstHistory; h > 0 {
		t0 := time.Now()
		for _, conv := range []string{direct, group} {
			if _, err := snd.send(ctx, conv, h, 0, "history"); err != nil {
				return fmt.Errorf("send the history: %w", err)
			}
		}
		b.logf("sent %d messages of history into each conversation in %.1fs", h, time.Since(t0).Seconds())
	}

	dir, err := os.MkdirTemp(b.tmp, "chatbench-tui-burst-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	env := []string{"TERM=xterm-256color", "CHAT_HOME=" + home, "CHAT_SERVER=" + t.url}
	login := exec.CommandContext(ctx, bin, "login", me, "--password-stdin")
	login.Env = append(os.Environ(), env...)
	login.Stdin = strings.NewReader(benchPassword + "\n")
	if out, err := login.CombinedOutput(); err != nil {
		return fmt.Errorf("chat login: %w: %s", err, bytes.TrimSpace(out))
	}

	p := &pane{tmux: tmux, socket: filepath.Join(dir, "tmux.sock")}
	defer exec.Command(tmux, "-S", p.socket, "kill-server").Run()
	// A session that lives through the whole run keeps the tmux server up
	// when the TUI's ends (a server exits with its last session).
	if _, err := p.cmd(ctx, "new-session", "-d", "-s", "keep", "sleep", "86400"); err != nil {
		return err
	}
	envArgs := append([]string{"env", "-u", "CHAT_TOKEN"}, env...)
	r := TUIBurstResult{Binary: bin, History: b.tuiBurstHistory, LoadedAll: b.tuiBurstLoadAll}
	only, _ := parseBurstOnly(b.tuiBurstOnly) // checked with the flags
	run := 0
	var idle float64 // the share of a core the pane's process uses idle: taken off each run
	var measure burstMeasure = func(kind, view, conv string, want func(marker string) string) error {
		for _, load := range []struct {
			name string
			rate float64
		}{{"burst", 0}, {"steady", b.tuiBurstRate}} {
			if !only.wants(kind, view, load.name) {
				continue
			}
			run++
			marker := fmt.Sprintf("end-of-run-%02d", run)
			c, err := b.burstCase(ctx, p, snd, conv, load.rate, idle, marker, want(marker))
			if err != nil {
				return fmt.Errorf("%s, %s, %s: %w", kind, view, load.name, err)
			}
			c.Conversation, c.View, c.Load = kind, view, load.name
			b.logf("%s, %s, %s: %d messages at %.0f/s, %.0f µs of CPU each, on screen %.0f ms after the last was stored",
				kind, view, load.name, c.Messages, c.SentPerSec, c.CPUPerMsgUS, c.LagMS)
			r.Cases = append(r.Cases, c)
		}
		return nil
	}
	if b.tuiBurstCases[burstViewOpen] || b.tuiBurstCases[burstViewInbox] {
		if err := b.burstTUI(ctx, p, bin, envArgs, direct, sender, group, groupName, &r, &idle, measure); err != nil {
			return err
		}
	}
	if b.tuiBurstCases[burstViewTail] {
		if err := b.burstTail(ctx, p, bin, envArgs, direct, group, &idle, measure); err != nil {
			return err
		}
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		r.LoadAverage1, _, _ = strings.Cut(string(data), " ")
	}
	b.report.Scenarios["tui-burst"] = r
	for _, c := range r.Cases {
		name := fmt.Sprintf("tui-burst %s, %s, %s", c.Conversation, c.View, c.Load)
		target, limit := "", 0.0
		switch {
		case c.Load == "steady" && c.View == "chat open":
			target, limit = "<= 300", 300
		case c.Load == "burst" && c.View == "chat open":
			target, limit = "<= 100", 100
		case c.Load == "burst":
			target, limit = "<= 50", 50
		}
		if target != "" {
			b.target(name, "CPU per message", c.CPUPerMsgUS, "µs", target, c.CPUPerMsgUS <= limit)
		} else {
			b.row(name, "CPU per message", c.CPUPerMsgUS, "µs")
		}
		b.target(name, "last stored to on screen", c.LagMS, "ms", "<= 100", c.LagMS <= 100)
		b.row(name, "sent", c.SentPerSec, "msgs/s")
	}
	if b.tuiBurstCases[burstViewOpen] || b.tuiBurstCases[burstViewInbox] {
		b.target("tui-burst idle", "CPU, chat open", r.IdlePercent, "% of a core", "<= 0.1", r.IdlePercent <= 0.1)
	}
	return nil
}

// burstCase sends one run and measures it.
func (b *bench) burstCase(ctx context.Context, p *pane, snd *burstSender, conv string, rate, idle float64, marker, want string) (TUIBurstCase, error) {
	n := b.tuiBurstMessages
	// What the last run left (read reports, acks) is done before this one.
	if err := waitQuiet(ctx, p.pid, time.Minute); err != nil {
		return TUIBurstCase{}, err
	}
	cpu0, err := procCPU(p.pid)
	if err != nil {
		return TUIBurstCase{}, err
	}
	start := time.Now()
	st, err := snd.send(ctx, conv, n, rate, marker)
	if err != nil {
		return TUIBurstCase{}, err
	}
	if err := p.wait(ctx, want, time.Minute); err != nil {
		return TUIBurstCase{}, err
	}
	shown := time.Now()
	time.Sleep(burstSettle)
	cpu1, err := procCPU(p.pid)
	if err != nil {
		return TUIBurstCase{}, err
	}
	window := time.Since(start)
	used := (cpu1 - cpu0) - time.Duration(idle*float64(window))
	return TUIBurstCase{Messages: n, SentPerSec: float64(n) / st.took.Seconds(),
		CPUPerMsgUS: float64(used.Microseconds()) / float64(n),
		LagMS:       float64(shown.Sub(st.lastStored).Microseconds()) / 1000}, nil
}

// burstSender sends as one user over one connection, reading its answers.
type burstSender struct {
	conn *wsConn
	mu   sync.Mutex
	acks chan string // the ids of sends stored
	errs chan error
	next int
}

func newBurstSender(ctx context.Context, c *wsConn) *burstSender {
	s := &burstSender{conn: c, acks: make(chan string, burstWindow), errs: make(chan error, 1)}
	go func() {
		for {
			f, err := c.read(ctx)
			if err != nil {
				s.errs <- fmt.Errorf("read the sender's answers: %w", err)
				return
			}
			switch f.Type {
			case wire.TypeSent:
				s.acks <- f.ID
			case wire.TypeError:
				s.errs <- fmt.Errorf("send %s refused: %v", f.ID, f.Error)
				return
			}
		}
	}()
	return s
}

type sendStats struct {
	took       time.Duration // first send to last stored
	lastStored time.Time
}

// send sends n messages into conv, the last saying marker, with at most
// burstWindow in flight: as fast as they are stored (rate 0) or one every
// 1/rate seconds. It returns when all are stored.
func (s *burstSender) send(ctx context.Context, conv string, n int, rate float64, marker string) (sendStats, error) {
	start := time.Now()
	sent, stored := 0, 0
	var last time.Time
	for stored < n {
		for sent < n && sent-stored < burstWindow {
			if rate > 0 {
				if d := time.Until(start.Add(time.Duration(float64(sent) / rate * float64(time.Second)))); d > 0 {
					break
				}
			}
			s.next++
			sent++
			content := burstContent(sent, n, marker)
			f := wire.Frame{Type: wire.TypeSend, ID: strconv.Itoa(s.next), ConversationID: conv,
				MessageID: fmt.Sprintf("tb-%s-%d", marker, sent), Content: content, FirstTry: true}
			if err := s.conn.write(ctx, f); err != nil {
				return sendStats{}, err
			}
		}
		wait := time.Hour
		if rate > 0 && sent < n {
			wait = max(time.Until(start.Add(time.Duration(float64(sent)/rate*float64(time.Second)))), 0)
		}
		select {
		case <-s.acks:
			stored++
			last = time.Now()
		case err := <-s.errs:
			return sendStats{}, err
		case <-time.After(wait):
		case <-ctx.Done():
			return sendStats{}, fmt.Errorf("sending: %w", ctx.Err())
		}
	}
	return sendStats{took: last.Sub(start), lastStored: last}, nil
}

// pane is the scenario's tmux server and the pane being measured.
type pane struct {
	tmux, socket string
	session      string
	pid          int
}

func (p *pane) cmd(ctx context.Context, args ...string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, p.tmux, append([]string{"-S", p.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("tmux %s: %w: %s", args[0], err, bytes.TrimSpace(out))
	}
	return out, nil
}

// start runs argv in a new session and takes its process as the one measured.
func (p *pane) start(ctx context.Context, session string, argv ...string) error {
	args := append([]string{"new-session", "-d", "-s", session, "-x", strconv.Itoa(burstCols), "-y", strconv.Itoa(burstRows)}, argv...)
	if _, err := p.cmd(ctx, args...); err != nil {
		return err
	}
	out, err := p.cmd(ctx, "list-panes", "-t", session, "-F", "#{pane_pid}")
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("tmux list-panes: pid %q: %w", out, err)
	}
	p.session, p.pid = session, pid
	return nil
}

// waitExit waits for a process to end.
func waitExit(ctx context.Context, pid int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		// Gone, or a zombie its parent (the tmux server) has not reaped yet.
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if _, rest, ok := strings.Cut(string(stat), ") "); ok && (strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X")) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d still running %v after it was told to quit", pid, within)
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *pane) keys(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		if _, err := p.cmd(ctx, "send-keys", "-t", p.session, k); err != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond) // one key, one frame: the next finds the screen it changed to
	}
	return nil
}

func (p *pane) capture(ctx context.Context) (string, error) {
	out, err := p.cmd(ctx, "capture-pane", "-p", "-t", p.session)
	return string(out), err
}

// wait polls the pane until it shows want.
func (p *pane) wait(ctx context.Context, want string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		screen, err := p.capture(ctx)
		if err != nil {
			return err
		}
		if strings.Contains(screen, want) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the pane did not show %q in %v; it holds:\n%s", want, within, screen)
		}
		select {
		case <-time.After(burstPoll):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// openChat opens a conversation through the finder (ctrl+k, its name,
// enter) and, with all, loads its whole history (g: to the first message,
// then G back to the newest).
func (p *pane) openChat(ctx context.Context, name string, all bool, history int) error {
	if err := p.keys(ctx, "C-k"); err != nil {
		return err
	}
	if _, err := p.cmd(ctx, "send-keys", "-t", p.session, "-l", name); err != nil {
		return err
	}
	time.Sleep(200 * time.Millisecond)
	if err := p.keys(ctx, "Enter"); err != nil {
		return err
	}
	if err := p.wait(ctx, "Write a message", 30*time.Second); err != nil {
		return err
	}
	if !all || history == 0 {
		return nil
	}
	if err := p.keys(ctx, "Escape", "g"); err != nil {
		return err
	}
	if err := p.wait(ctx, "beginning of the conversation", 10*time.Minute); err != nil {
		return err
	}
	return p.keys(ctx, "G", "i")
}

// procCPU is the CPU time the process has used, the sum over its threads
// (schedstat counts nanoseconds; /proc/PID/stat counts 10 ms ticks).
func procCPU(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no threads of process %d in /proc (has it exited?)", pid)
	}
	var sum int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended since the glob
		}
		f, _, _ := strings.Cut(string(data), " ")
		ns, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", t, data, err)
		}
		sum += ns
	}
	return time.Duration(sum), nil
}

// idleRate is the share of a core the process uses over d.
func idleRate(ctx context.Context, pid int, d time.Duration) (float64, error) {
	a, err := procCPU(pid)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	b, err := procCPU(pid)
	if err != nil {
		return 0, err
	}
	return float64(b-a) / float64(time.Since(t0)), nil
}

// waitQuiet waits until the process uses under 3% of a core over half a
// second: what it had to catch up on is done.
func waitQuiet(ctx context.Context, pid int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		rate, err := idleRate(ctx, pid, 500*time.Millisecond)
		if err != nil {
			return err
		}
		if rate < 0.03 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d still busy (%.0f%% of a core) after %v", pid, rate*100, within)
		}
	}
}

// burstContent is the text of message i (from 1) of a run of n whose last
// says marker. Only the last holds the marker: the pane is searched for it
// to time the last message's arrival on screen, and until session 23 every
// message of a run carried it ("message 5 of end-of-run-01, ..."), so the
// search found the run's first lines and the figure said when any message
// of the run was on screen, not the last. The others keep the text's shape
// and characters ("message 5 of run-01, ...": a '-' inside a word, which
// mdterm draws on its plain path), so the work a message asks is the same.
func burstContent(i, n int, marker string) string {
	if i == n {
		return marker
	}
	return fmt.Sprintf("message %d of %s, about as long as people type", i, strings.TrimPrefix(marker, "end-of-"))
}

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
	"time"

	"github.com/chatterm/chat/wire"
)

// cliWarmup runs of each command come first and are not counted: the first
// start of a binary pays for reading it from disk.
const cliWarmup = 10

// CLIResult is the cli scenario's measurement: `chat send` from process start
// to exit, per command shape.
type CLIResult struct {
	Binary string                 `json:"binary"`
	Runs   int                    `json:"runs"`
	Send   map[string]Percentiles `json:"send"`
}

// cli measures the target "chat send returns in under 30 ms on loopback" as a
// script meets it: the real chat binary started once per message, from process
// start to exit, with a login stored in its home. Two shapes: --to (the direct
// conversation is looked up first: two requests) and --group (one). Each run
// must print the next seq_no of its conversation, or the scenario fails.
func (b *bench) cli(ctx context.Context) error {
	bin, err := b.chatBinary()
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp(b.tmp, "chatbench-cli-home-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	return b.withTarget(ctx, "cli", func(t *target) error { return b.cliSends(ctx, t, bin, home) })
}

func (b *bench) cliSends(ctx context.Context, t *target, bin, home string) error {
	// The run id keeps the users apart from an earlier run on a --server.
	alice, bob := "clibench-a-"+b.runID, "clibench-b-"+b.runID
	a := &api{base: t.url, hc: b.dial.api}
	if _, err := a.register(ctx, []string{alice, bob}); err != nil {
		return err
	}
	// The stored login is what is measured, not a token from the environment.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CHAT_") {
			env = append(env, kv)
		}
	}
	chat := func(stdin string, args ...string) (string, time.Duration, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(env, "CHAT_HOME="+home, "CHAT_SERVER="+t.url)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		if err != nil {
			return "", took, fmt.Errorf("chat %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
		}
		return strings.TrimSpace(out.String()), took, nil
	}
	if _, _, err := chat(benchPassword+"\n", "login", alice, "--password-stdin"); err != nil {
		return err
	}
	group, _, err := chat("", "group", "create", "clibench", "--members", bob)
	if err != nil {
		return err
	}
	if err := wire.ValidateConversationID(group); err != nil {
		return fmt.Errorf("chat group create printed %q, not a conversation id", group)
	}
	r := CLIResult{Binary: bin, Runs: b.cliRuns, Send: map[string]Percentiles{}}
	for _, shape := range []struct{ name, flag, to string }{{"send --to", "--to", bob}, {"send --group", "--group", group}} {
		h := newHist()
		var last int64
		for i := range cliWarmup + b.cliRuns {
			out, took, err := chat("", "send", shape.flag, shape.to, fmt.Sprintf("cli bench message %d", i))
			if err != nil {
				return err
			}
			seq, err := strconv.ParseInt(out, 10, 64)
			if err != nil || last > 0 && seq != last+1 {
				return fmt.Errorf("chat %s: run %d printed %q after seq_no %d; want the next seq_no", shape.name, i, out, last)
			}
			last = seq
			if i >= cliWarmup {
				h.record(0, took)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		p := h.percentiles()
		r.Send[shape.name] = p
		name := "cli " + shape.name
		b.row(name, "process start to exit p50", p.P50, "ms")
		b.target(name, "process start to exit p99", p.P99, "ms", "< 30", p.P99 < 30)
		b.logf("chat %s: %d runs, p50 %.2f ms, p99 %.2f ms", shape.name, b.cliRuns, p.P50, p.P99)
	}
	b.report.Scenarios["cli"] = r
	return nil
}

// chatBinary finds the chat binary: --chat-bin, else one beside this program,
// else one on PATH.
func (b *bench) chatBinary() (string, error) {
	if b.chatBin != "" {
		if _, err := os.Stat(b.chatBin); err != nil {
			return "", fmt.Errorf("--chat-bin: %w", err)
		}
		return b.chatBin, nil
	}
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), "chat")
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	if p, err := exec.LookPath("chat"); err == nil {
		return p, nil
	}
	return "", errors.New("no chat binary beside chatbench or on PATH: build one (go build -o DIR ./cmd/chat) and pass --chat-bin DIR/chat")
}

// chatInTmux is what a scenario that runs the real chat in a tmux pane
// needs: the chat binary (chatBinary) and tmux's path.
func (b *bench) chatInTmux(scenario string) (bin, tmux string, err error) {
	if bin, err = b.chatBinary(); err != nil {
		return "", "", err
	}
	if tmux, err = exec.LookPath("tmux"); err != nil {
		return "", "", fmt.Errorf("the %s scenario runs chat in tmux, and there is no tmux on PATH (apt-get install tmux)", scenario)
	}
	return bin, tmux, nil
}

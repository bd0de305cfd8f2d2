package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// burstMeasure runs a view's burst and steady cases in one conversation.
type burstMeasure func(kind, view, conv string, want func(marker string) string) error

func onScreen(marker string) string { return marker }

// burstTUI measures the TUI (the chat open, then the inbox shown, each as
// --tui-burst-cases asks) in the direct conversation and the group, then
// quits it. It sets the idle rate the cases after it take off.
func (b *bench) burstTUI(ctx context.Context, p *pane, bin string, envArgs []string, direct, sender, group, groupName string,
	r *TUIBurstResult, idle *float64, measure burstMeasure) error {
	tuiArgs := envArgs
	if b.tuiCPUProfile != "" {
		tuiArgs = append(tuiArgs, "CHAT_CPUPROFILE="+b.tuiCPUProfile)
	}
	if err := p.start(ctx, "tui", append(tuiArgs, bin)...); err != nil {
		return err
	}
	if err := p.wait(ctx, "● connected", 30*time.Second); err != nil {
		return err
	}
	// The history reaches the cache after connecting: wait for it to settle.
	if err := waitQuiet(ctx, p.pid, 5*time.Minute); err != nil {
		return err
	}
	for i, kc := range []struct{ kind, conv, find string }{{"direct", direct, sender}, {"group of 10", group, groupName}} {
		if i > 0 && !b.burstOnly().wants(kc.kind, "", "") {
			continue // the first is opened for idle whatever is asked
		}
		if err := p.openChat(ctx, kc.find, b.tuiBurstLoadAll, b.tuiBurstHistory); err != nil {
			return fmt.Errorf("open the %s conversation: %w", kc.kind, err)
		}
		if i == 0 {
			// Idle, with a chat open and the composer focused.
			if err := waitQuiet(ctx, p.pid, time.Minute); err != nil {
				return err
			}
			var err error
			if *idle, err = idleRate(ctx, p.pid, 10*time.Second); err != nil {
				return err
			}
			r.IdlePercent, r.IdleSeconds = *idle*100, 10
			b.logf("idle with the chat open: %.3f%% of a core", r.IdlePercent)
			for k := range b.tuiBurstIdleMore {
				time.Sleep(20 * time.Second)
				more, err := idleRate(ctx, p.pid, 10*time.Second)
				if err != nil {
					return err
				}
				r.IdleMore = append(r.IdleMore, more*100)
				b.logf("idle with the chat open, %d more: %.3f%% of a core", k+1, more*100)
			}
		}
		if b.tuiBurstCases[burstViewOpen] {
			if err := measure(kc.kind, "chat open", kc.conv, onScreen); err != nil {
				return err
			}
		}
		if err := p.keys(ctx, "Escape", "Escape"); err != nil { // reading, then the inbox
			return err
		}
		if b.tuiBurstCases[burstViewInbox] {
			if err := measure(kc.kind, "inbox shown", kc.conv, onScreen); err != nil {
				return err
			}
		}
	}
	return p.quit(ctx, b, "--tui-cpuprofile")
}

// burstTail measures chat tail, alone (the TUI has quit), in the direct
// conversation and the group, then stops it as a user does (ctrl+c), so a
// --tail-cpuprofile is written.
func (b *bench) burstTail(ctx context.Context, p *pane, bin string, envArgs []string, direct, group string, idle *float64, measure burstMeasure) error {
	tailArgs := envArgs
	if b.tailCPUProfile != "" {
		tailArgs = append(tailArgs, "CHAT_CPUPROFILE="+b.tailCPUProfile)
	}
	if err := p.start(ctx, "tail", append(tailArgs, bin, "tail")...); err != nil {
		return err
	}
	if err := waitQuiet(ctx, p.pid, time.Minute); err != nil {
		return err
	}
	var err error
	if *idle, err = idleRate(ctx, p.pid, 10*time.Second); err != nil {
		return err
	}
	b.logf("chat tail idle: %.3f%% of a core", *idle*100)
	for _, kc := range []struct{ kind, conv string }{{"direct", direct}, {"group of 10", group}} {
		if err := measure(kc.kind, "chat tail", kc.conv, onScreen); err != nil {
			return err
		}
	}
	return p.quit(ctx, b, "--tail-cpuprofile")
}

// quit ends the pane's process as a user does, so that a CPU profile is
// written out: ctrl+c, and again if it asked first. One that does not end
// is killed with a warning naming the profile flag whose file is lost.
func (p *pane) quit(ctx context.Context, b *bench, profileFlag string) error {
	for range 3 {
		p.keys(ctx, "C-c") // fails once the pane has gone with the process
		if waitExit(ctx, p.pid, 2*time.Second) == nil {
			return nil
		}
	}
	if err := waitExit(ctx, p.pid, 30*time.Second); err != nil {
		// Not what is measured here, but worth knowing: say it and go on.
		b.logf("WARNING: %v; killed (a %s is lost)", err, profileFlag)
		if proc, ferr := os.FindProcess(p.pid); ferr == nil {
			proc.Kill()
		}
		return waitExit(ctx, p.pid, 10*time.Second)
	}
	return nil
}

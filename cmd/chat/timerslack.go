package main

// The process's timer slack is 1 ms from before the Go runtime starts
// (internal/timerslack): the runtime's monitor thread then sleeps ~1 ms at a
// time instead of 20 µs while the TUI works, which was a quarter of its CPU
// for each message of a steady stream. CHAT_TIMER_SLACK_US changes it.
import "github.com/chatterm/chat/internal/timerslack"

// timerSlackFromEnv refuses a CHAT_TIMER_SLACK_US the package's constructor
// left alone, as a usage error: it ran before main and could not say so.
func (a *app) timerSlackFromEnv() error {
	v := a.getenv("CHAT_TIMER_SLACK_US")
	if err := timerslack.CheckEnv(v); err != nil {
		return usagef("CHAT_TIMER_SLACK_US=%q: %v", v, err)
	}
	return nil
}

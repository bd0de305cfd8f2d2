package main

// The process's timer slack is 1 ms from before the Go runtime starts
// (internal/timerslack): the runtime's monitor thread then sleeps ~1 ms at a
// time instead of 20 µs while the TUI works, which was a quarter of its CPU
// for each message of a steady stream. CHAT_TIMER_SLACK_US changes it.
import _ "github.com/chatterm/chat/internal/timerslack"

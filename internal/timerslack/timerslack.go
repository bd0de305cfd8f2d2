// Package timerslack widens the kernel's timer slack for the whole process,
// before the Go runtime starts its first thread. Import it for its effect
// (cmd/chat does); it has no API but Slack, for tests.
//
// Why: the Go runtime's monitor thread (sysmon) sleeps 20 µs at a time
// whenever any goroutine runs, and a syscall after an idle spell (a socket
// read, an SQLite call) restarts those short sleeps. A chat client receiving
// a steady stream goes from idle to busy dozens of times a second, so the
// monitor slept and woke ~800 times a second: a quarter of the TUI's CPU
// for each incoming message, most of it the kernel's cost of a sleep and a
// context switch on a virtual machine. A timer's slack lets the kernel end
// a sleep up to that much later, so it can fire it with another timer;
// 1 ms turns the monitor's 20 µs sleeps into ~1 ms ones and costs an
// interactive program nothing it can see (a frame's timer firing up to
// 1 ms late). The kernel's default is 50 µs.
//
// It is set from a C constructor because the slack is per thread and a new
// thread inherits its creator's: set on the main thread before the Go
// runtime starts, every thread the runtime starts has it, the monitor
// included. Children started later (an editor, a viewer) inherit it too.
//
// CHAT_TIMER_SLACK_US sets another slack in microseconds, for measuring one
// binary both ways: digits only, at most 1,000,000; 0, or anything else,
// leaves the slack inherited.
package timerslack

package localstore

import "context"

// statementContext is the context for the statements of a loop over rows
// (a receive commit's messages, a burst's boundaries), whose caller checks
// the ctx it was given once a row instead. go-sqlite3 runs a statement
// whose context can end in a goroutine of its own, so that it can
// interrupt it when the context ends (SQLiteStmt.exec): a goroutine and
// two switches per row. In a session, whose context can always end, that
// was 40% of storing a burst (BenchmarkPutMessageBurstLive: 21–22 µs of
// CPU a message against 13 without; docs/tui.md), where a row's statement
// takes microseconds and never needs interrupting.
func statementContext(ctx context.Context) context.Context {
	return context.WithoutCancel(ctx)
}

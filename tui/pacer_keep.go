package tui

// A stream starts when streamViews Views come in one idleAfter window (32 a
// second), but it does not end there: a steady 200 msgs/s chat brings some
// 33 Views a second (the session holds its batches ~30 ms), right at that
// line, so on a loaded machine its windows held 7 to 11 and the stream
// flapped. Each window under 8 put the ticker back at the full frame rate
// and drew every View for 250 ms: counted in the real chat (a steady run of
// 2,000 messages, direct, chat open), 14.5 frames a second where the stream
// means 10, four windows of ten frames in ten seconds drawn at 30 a second.
// Once a stream runs it goes on while a window has streamKeep Views (8 a
// second: a long stream's batches are held 60 ms, client/hold.go, about
// four a window, and a late one, waited for up to two holds, leaves two); fewer end it as before, and no View at all puts the pacer to
// sleep. Its last message is still drawn at once by the pause
// (pacer_quiet.go), so nothing a person waits for comes later.
const pacerStreamKeepViews = 2

// streamGoesOn reports whether a window of views Views and keys keys is (or
// keeps) a stream. Called with f.mu held.
func (f *FramePacer) streamGoesOn(views, keys int) bool {
	if f.streamViews <= 0 || keys > 0 {
		return false // keys are typing: never slowed (pacer.go)
	}
	if f.streaming {
		return views >= min(f.streamKeep, f.streamViews)
	}
	return views >= f.streamViews
}

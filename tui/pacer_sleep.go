package tui

// OnSleep sets what runs, on a goroutine of its own, each time the pacer
// slows the renderer: the TUI has had nothing to draw for a while, so
// whatever should not compete with drawing can run then (cmd/chat returns
// the heap's free memory to the system at once there, rather than leaving
// Go's background scavenger to trickle it out for a minute of idle).
func (f *FramePacer) OnSleep(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onSleep = fn
}

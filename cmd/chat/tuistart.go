package main

import (
	"io"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/chatterm/chat/tui"
)

// The first frame of the TUI is the inbox from the cache (docs/tui.md, "Time
// to a painted inbox"). Two things used to run before or beside it and now
// wait until it is painted:
//   - the session's connection: its dial, sync and the events they bring
//     competed with the cache read and the first paint for the same two
//     cores (and the cache's one connection);
//   - inside tmux, Bubble Tea's colour detection runs `tmux info` to learn
//     whether tmux passes true colour: a process started and waited for
//     before the first frame, on every start.

// startEnviron is the environment Bubble Tea is given: the process's
// without TMUX, so that no colour detection before the first frame starts
// `tmux info` (Bubble Tea's own, and the one ultraviolet's terminal renderer
// runs when Bubble Tea creates it). Nothing else in either reads TMUX.
func startEnviron(environ []string) []string {
	return slices.DeleteFunc(slices.Clone(environ), func(e string) bool { return strings.HasPrefix(e, "TMUX=") })
}

// startColorProfile is the terminal's colour profile from the environment
// and terminfo alone. Outside tmux it is what colorprofile.Detect gives.
func startColorProfile(out io.Writer, environ []string) colorprofile.Profile {
	return colorprofile.Detect(out, startEnviron(environ))
}

// laterColorProfile is the full detection, `tmux info` included, as a
// message that switches Bubble Tea's renderer when it finds more than the
// start did (nil otherwise).
func laterColorProfile(out io.Writer, environ []string, start colorprofile.Profile) tea.Msg {
	if p := colorprofile.Detect(out, environ); p != start {
		return tea.ColorProfileMsg{Profile: p}
	}
	return nil
}

// afterInbox is tui.Options.AfterInbox, run once the first inbox is in the
// model: the renderer draws it at once rather than at its next tick
// (FrameSoon), and a frame later (tuiFPS), when it is on the screen, the
// renderer settles, the garbage collector held since the start runs again
// and the TUI goes down to one processor (settle: releaseGC, startgc.go, and
// oneProcessor, procs.go), the session connects and the colour profile is
// completed.
func afterInbox(be *tuiBackend, pacer *tui.FramePacer, settle func(), out io.Writer, environ []string, start colorprofile.Profile) tea.Cmd {
	return func() tea.Msg {
		pacer.FrameSoon()
		time.Sleep(time.Second / tuiFPS)
		pacer.Settle()
		settle()
		be.connect()
		return laterColorProfile(out, environ, start)
	}
}

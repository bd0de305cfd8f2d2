// Package initenv hides TMUX from the package initialisers that run before
// main, and gives it back to main.
//
// lipgloss v2 (v2.0.6 and v2.1.0 alike) declares a package-level
// `var Writer = colorprofile.NewWriter(os.Stdout, os.Environ())`. When
// standard output is a terminal and TMUX is set, colorprofile's detection
// runs `tmux info` to learn whether tmux passes true colour: a process
// started and waited for before main, on every start of chat inside tmux
// (14 ms on a quiet machine, 20–35 ms under load; docs/tui.md "Time to a
// painted inbox"). No lipgloss option reaches a package variable, and chat
// never uses that Writer: the TUI's colour profile is detected in
// cmd/chat, `tmux info` included, after the first frame.
//
// This package unsets TMUX in its init and Restore sets it back. It runs
// before lipgloss's initialisers by the Go specification's order of package
// initialisation (Go 1.21 on: "the first uninitialized package in the list,
// sorted by import path, for which all imports are already initialized"):
// it imports only os, which colorprofile's os/exec needs too, and its path
// sorts before os/exec's, so it is initialised first. TestInitHidesTmux
// checks it in a process of its own.
package initenv

import "os"

// tmux is TMUX as the process was given it; set is whether it was set.
var tmux, set = hide("TMUX")

func hide(key string) (string, bool) {
	v, ok := os.LookupEnv(key)
	if ok {
		_ = os.Unsetenv(key)
	}
	return v, ok
}

// Restore gives TMUX back. main calls it first thing, so that everything
// from main on (the TUI's colour detection after the first frame, $EDITOR,
// notify-send) sees the environment the process was started with.
func Restore() {
	if set {
		_ = os.Setenv("TMUX", tmux)
	}
}

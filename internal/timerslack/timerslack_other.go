//go:build !linux || !cgo

package timerslack

import "time"

// Slack is zero where the slack is not set (no prctl, or no cgo).
func Slack() time.Duration { return 0 }

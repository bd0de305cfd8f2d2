package timerslack

import (
	"errors"
	"strconv"
)

// MaxSlackUS is the most CHAT_TIMER_SLACK_US may ask for: a second already
// makes every timer of the process a second late.
const MaxSlackUS = 1_000_000

// CheckEnv says whether v, CHAT_TIMER_SLACK_US's value, is one the
// constructor takes (timerslack_linux_cgo.go follows the same rules, and
// TestSlackFromTheEnvironment checks they agree): empty, or digits only, at
// most MaxSlackUS. The constructor runs before any Go code and cannot say
// what it refused; the command that imports the package says it with this.
func CheckEnv(v string) error {
	if v == "" {
		return nil
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return errors.New("give microseconds, digits only (0 leaves the slack the process inherited)")
		}
	}
	if n, err := strconv.ParseUint(v, 10, 64); err != nil || n > MaxSlackUS {
		return errors.New("give at most 1000000 microseconds")
	}
	return nil
}

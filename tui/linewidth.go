package tui

import "github.com/charmbracelet/x/ansi"

// lineWidth is ansi.StringWidth(s) for a drawn line: printable ASCII between
// SGR (CSI) and hyperlink (OSC) sequences is one cell a byte, counted here
// without Unicode segmentation, which ansi.StringWidth runs for every
// character (measuring each new message's lines was a tenth of the chat's
// Update per message). Anything else in s — a byte past ASCII, another
// control or escape — is left to ansi.StringWidth. FuzzLineWidth checks the
// two agree.
func lineWidth(s string) int {
	w := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			w++
			i++
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			n := csiLen(s[i+2:])
			if n < 0 {
				return ansi.StringWidth(s)
			}
			i += 2 + n
		case c == 0x1b && i+1 < len(s) && s[i+1] == ']':
			n := oscLen(s[i+2:])
			if n < 0 {
				return ansi.StringWidth(s)
			}
			i += 2 + n
		default:
			return ansi.StringWidth(s)
		}
	}
	return w
}

// csiLen is the length of a control sequence's rest after "ESC [":
// parameter bytes, intermediate bytes, the final byte; -1 if s does not
// hold one so formed.
func csiLen(s string) int {
	i := 0
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		return i + 1
	}
	return -1
}

// oscLen is the length of an operating system command's rest after
// "ESC ]": printable ASCII ended by BEL or ST (ESC \); -1 if s does not hold
// one so formed.
func oscLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 0x07:
			return i + 1
		case c == 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return -1
		case c < 0x20 || c >= 0x7f:
			return -1
		}
	}
	return -1
}

package mdterm

import "strings"

// renderPlainText is renderPlain for text plainText let through. Such a
// line has words and the spaces between them and none before or after, so
// wrap gives a line of printable ASCII that fits the width back whole, and
// draw paints it as one run of style 0: that is drawn here without
// splitting it into words and putting them together again (most of the cost
// of a chat message's text). Any other line is wrapped as renderPlain does;
// FuzzPlainLine checks both ways draw the same lines.
func renderPlainText(src string, o Options) []string {
	r := renderer{width: max(o.Width, 2), paint: o.Paint}
	r.out = make([]string, 0, strings.Count(src, "\n")+1)
	for l := range strings.SplitSeq(src, "\n") {
		if len(l) <= r.width && printableASCII(l) {
			if r.paint != nil {
				l = r.paint(l, 0)
			}
			r.out = append(r.out, l)
			continue
		}
		r.emit(r.wrap([]span{{text: l}}, r.width))
	}
	return r.out
}

// printableASCII is whether every byte of s is printable ASCII, one cell
// each.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

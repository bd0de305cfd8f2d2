package wire

import (
	"slices"

	"github.com/mailru/easyjson/jlexer"
	"github.com/mailru/easyjson/jwriter"
)

// Reactions is a message's reactions, user_id → emoji. It encodes with its
// keys in order (as encoding/json does maps), so a frame encodes to the same
// bytes every time.
type Reactions map[string]string

// MarshalEasyJSON writes the object with sorted keys.
func (r Reactions) MarshalEasyJSON(w *jwriter.Writer) {
	if r == nil {
		w.RawString("null")
		return
	}
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.RawByte('{')
	for i, k := range keys {
		if i > 0 {
			w.RawByte(',')
		}
		w.String(k)
		w.RawByte(':')
		w.String(r[k])
	}
	w.RawByte('}')
}

// UnmarshalEasyJSON reads an object of strings (null: none).
func (r *Reactions) UnmarshalEasyJSON(l *jlexer.Lexer) {
	if l.IsNull() {
		l.Skip()
		*r = nil
		return
	}
	out := Reactions{}
	l.Delim('{')
	for !l.IsDelim('}') {
		k := l.String() // a copy: the lexer's buffer is reused
		l.WantColon()
		out[k] = l.String()
		l.WantComma()
	}
	l.Delim('}')
	*r = out
}

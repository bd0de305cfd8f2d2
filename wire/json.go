package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/mailru/easyjson"
	"github.com/mailru/easyjson/jwriter"
)

// WriteJSON encodes v and a newline; once that has worked it calls start with
// the body's size (to write the headers) and writes the body to w. The API's
// types are written from the generated code's buffers as they are, without
// joining them into one more copy of the body first (a history page is ~10 KB).
func WriteJSON(w io.Writer, v any, start func(size int)) error {
	if m, ok := v.(easyjson.Marshaler); ok {
		var jw jwriter.Writer
		m.MarshalEasyJSON(&jw)
		jw.RawByte('\n')
		if jw.Error != nil {
			return jw.Error
		}
		start(jw.Size())
		_, err := jw.DumpTo(w)
		return err
	}
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	body = append(body, '\n')
	start(len(body))
	_, err = w.Write(body)
	return err
}

// DecodeAnswer decodes a server's answer body into v, leniently (unknown fields
// are skipped, so a newer server's additions do not break a client), through the
// generated code when v has it. Requests to the server use DecodeJSON.
func DecodeAnswer(data []byte, v any) error {
	if u, ok := v.(easyjson.Unmarshaler); ok {
		return easyjson.Unmarshal(data, u)
	}
	return json.Unmarshal(data, v)
}

// DecodeJSON strictly decodes one JSON object into v: unknown fields and trailing
// data are errors, so a typo in a script fails loudly instead of being ignored.
// The error is an *Error with CodeInvalid.
func DecodeJSON(data []byte, v any) error {
	if err := checkStringControls(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return Errorf(CodeInvalid, "request body is empty; a JSON object is required")
		}
		return Errorf(CodeInvalid, "request body is not valid: %v", err)
	}
	if dec.More() {
		return Errorf(CodeInvalid, "request body has data after the JSON object")
	}
	return nil
}

// checkStringControls refuses a raw control character (a byte below 0x20:
// NUL, ESC, a newline...) inside a JSON string, which JSON does not allow
// (RFC 8259 §7: they must be escaped). encoding/json refuses one; the
// generated frame decoder (easyjson) let a raw NUL through into stored
// content. Both the HTTP bodies (DecodeJSON) and the WebSocket frames
// (DecodeFrame) pass here, so both refuse it with the same words. Outside
// strings such bytes are whitespace or a syntax error the decoders report.
func checkStringControls(data []byte) error {
	in, esc := false, false
	for i, c := range data {
		switch {
		case !in:
			in = c == '"'
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			in = false
		case c < 0x20:
			return Errorf(CodeInvalid, "control character 0x%02x at byte %d inside a JSON string; escape it (\\u%04x)", c, i, c)
		}
	}
	return nil
}

package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/mailru/easyjson"
)

// EncodeJSON marshals an answer body. The API's types go through the code
// generated for them (api_easyjson.go), which writes what encoding/json writes
// at a fraction of the cost (a history page is 50 messages); other values go
// through encoding/json.
func EncodeJSON(v any) ([]byte, error) {
	if m, ok := v.(easyjson.Marshaler); ok {
		return easyjson.Marshal(m)
	}
	return json.Marshal(v)
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

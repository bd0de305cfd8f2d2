package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

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

package wire

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Code is a machine-readable error code. The set is closed: every error a server
// returns, over HTTP or as an error frame, carries one of these.
type Code string

const (
	CodeInvalid      Code = "invalid"      // malformed or unacceptable input
	CodeUnauthorized Code = "unauthorized" // missing, unknown or expired token; bad password
	CodeForbidden    Code = "forbidden"    // authenticated but not allowed (not a participant, not admin)
	CodeNotFound     Code = "not_found"    // unknown user, conversation or route
	CodeConflict     Code = "conflict"     // already exists (user id taken)
	CodeTooLarge     Code = "too_large"    // message or body over the limit
	CodeRateLimited  Code = "rate_limited" // per-user send rate exceeded; retry after RetryAfterMs
	CodeOverloaded   Code = "overloaded"   // the server's work queue is full; retry after RetryAfterMs
	CodeUnavailable  Code = "unavailable"  // a backing service is down or its circuit is open
	CodeMaybeStored  Code = "maybe_stored" // a send's write failed without an answer: it may be stored; resend with the same message_id
	CodeInternal     Code = "internal"     // a bug or an unexpected failure; logged by the server

	// CodeMessageIDTaken: another member's message has this message_id in the
	// conversation (HTTP 409). A message_id is idempotent per sender only:
	// answering with the other member's message would report as stored a
	// send that never was.
	CodeMessageIDTaken Code = "message_id_taken"

	// CodeQuota: the user's media storage quota is used up (HTTP 413); GET
	// /v1/media/usage shows it.
	CodeQuota Code = "quota_exceeded"

	// CodeBlank: a name, status, text or reaction that would show as
	// nothing (HTTP 400).
	CodeBlank Code = "blank_text"
	// CodeConfusable: a display name or user id that reads like another
	// user's (HTTP 409).
	CodeConfusable Code = "confusable_name"
	// CodeAccountDisabled: an admin disabled the account (HTTP 403): its
	// tokens and its password are refused with this code, not as unknown, so
	// a client says so instead of asking to log in again.
	CodeAccountDisabled Code = "account_disabled"
	// CodeMentionAllAdminsOnly: a member's message uses @all or @here in a
	// group that keeps them for its admins (HTTP 403). Its own code, not
	// forbidden: the sender is a member, and the message without them would
	// be stored, so a client says that rather than "not a member".
	CodeMentionAllAdminsOnly Code = "mention_all_admins_only"
)

// codeInfo is the one table mapping codes to HTTP statuses.
var codeInfo = map[Code]int{
	CodeInvalid:      http.StatusBadRequest,
	CodeUnauthorized: http.StatusUnauthorized,
	CodeForbidden:    http.StatusForbidden,
	CodeNotFound:     http.StatusNotFound,
	CodeConflict:     http.StatusConflict,
	CodeTooLarge:     http.StatusRequestEntityTooLarge,
	CodeRateLimited:  http.StatusTooManyRequests,
	CodeOverloaded:   http.StatusServiceUnavailable,
	CodeUnavailable:  http.StatusServiceUnavailable,
	CodeMaybeStored:  http.StatusServiceUnavailable,
	CodeInternal:     http.StatusInternalServerError,

	CodeMessageIDTaken: http.StatusConflict,
	CodeQuota:          http.StatusRequestEntityTooLarge,
	CodeBlank:          http.StatusBadRequest,
	CodeConfusable:     http.StatusConflict,

	CodeAccountDisabled:      http.StatusForbidden,
	CodeMentionAllAdminsOnly: http.StatusForbidden,
}

// HTTPStatus returns the HTTP status for a code; unknown codes are 500.
func (c Code) HTTPStatus() int {
	if s, ok := codeInfo[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Retryable reports whether the same request may succeed later unchanged.
func (c Code) Retryable() bool {
	return c == CodeRateLimited || c == CodeOverloaded || c == CodeUnavailable || c == CodeMaybeStored
}

// CodeFromHTTPStatus is the reverse mapping, for responses that carry no JSON body
// (a proxy's 502, say).
func CodeFromHTTPStatus(status int) Code {
	switch status {
	case http.StatusBadRequest:
		return CodeInvalid
	case http.StatusUnauthorized:
		return CodeUnauthorized
	case http.StatusForbidden:
		return CodeForbidden
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusConflict:
		return CodeConflict
	case http.StatusRequestEntityTooLarge:
		return CodeTooLarge
	case http.StatusTooManyRequests:
		return CodeRateLimited
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return CodeUnavailable
	}
	return CodeInternal
}

// Error is the one error type of the protocol: {"code","message"} plus an optional
// retry hint. Server code returns it for every failure a client should see.
type Error struct {
	Code         Code   `json:"code"`
	Message      string `json:"message"`
	RetryAfterMs int64  `json:"retry_after_ms,omitempty"`
}

func (e *Error) Error() string {
	if e.RetryAfterMs > 0 {
		return fmt.Sprintf("%s: %s (retry after %dms)", e.Code, e.Message, e.RetryAfterMs)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// RetryAfter is the hint as a duration (zero when none).
func (e *Error) RetryAfter() time.Duration { return time.Duration(e.RetryAfterMs) * time.Millisecond }

// Errorf builds an *Error.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, else CodeInternal.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the client-safe message of err: an *Error's own message, and
// a generic text for anything else so that internal details never leak.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// AsError converts any error to an *Error fit to send to a client.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: "internal error"}
}

// ErrorResponse is the HTTP body of every failed request: {"error":{"code","message"}}.
type ErrorResponse struct {
	Error *Error `json:"error"`
}

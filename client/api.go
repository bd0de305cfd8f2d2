package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chatterm/chat/wire"
)

// maxResponseBytes bounds any answer read from the server.
const maxResponseBytes = 16 << 20

// API is a typed client for the HTTP API of docs/protocol.md. Every method
// takes a context and returns either the decoded answer or an error; a failure
// the server reported is a *wire.Error (test with wire.ErrorCode), anything
// else (network, bad answer) is a plain wrapped error.
type API struct {
	server string
	token  string
	hc     *http.Client
}

// defaultHTTPClient bounds connection set-up; whole requests are bounded by the
// caller's context.
var defaultHTTPClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout:   10 * time.Second,
	ResponseHeaderTimeout: 60 * time.Second,
	IdleConnTimeout:       90 * time.Second,
	MaxIdleConnsPerHost:   4,
	ForceAttemptHTTP2:     true,
}}

// NewAPI returns an API client for server (a base URL, see NormalizeServer)
// presenting token (empty for register and login). hc nil: a default client.
func NewAPI(server, token string, hc *http.Client) *API {
	if hc == nil {
		hc = defaultHTTPClient
	}
	return &API{server: strings.TrimRight(server, "/"), token: token, hc: hc}
}

// Server is the base URL.
func (a *API) Server() string { return a.server }

// Token is the presented token.
func (a *API) Token() string { return a.token }

// WithToken returns a copy presenting another token.
func (a *API) WithToken(token string) *API {
	b := *a
	b.token = token
	return &b
}

// do sends one request and decodes the JSON answer into out (nil: discard).
func (a *API) do(ctx context.Context, method, path string, query url.Values, in, out any) (int, error) {
	u := a.server + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("%s %s: encode request: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
		return 0, &NetError{Server: a.server, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return resp.StatusCode, &NetError{Server: a.server, Err: fmt.Errorf("read answer to %s %s: %w", method, path, err)}
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, decodeError(resp, data)
	}
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if err := wire.DecodeAnswer(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: the server's answer is not the expected JSON: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// decodeError turns a failed answer into a *wire.Error: the server's own
// {"error":{...}} when there is one, else one made from the status (a proxy's
// 502 has no such body). The Retry-After header fills a missing retry hint.
func decodeError(resp *http.Response, data []byte) *wire.Error {
	var er wire.ErrorResponse
	e := &wire.Error{}
	if json.Unmarshal(data, &er) == nil && er.Error != nil && er.Error.Code != "" {
		e = er.Error
	} else {
		e.Code = wire.CodeFromHTTPStatus(resp.StatusCode)
		e.Message = "the server answered " + resp.Status
	}
	if e.RetryAfterMs == 0 {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			e.RetryAfterMs = int64(s) * 1000
		}
	}
	return e
}

// NetError is a failure to reach the server or to read its answer.
type NetError struct {
	Server string
	Err    error
}

func (e *NetError) Error() string {
	return fmt.Sprintf("cannot reach %s: %v", e.Server, e.Err)
}

func (e *NetError) Unwrap() error { return e.Err }

// IsNetError reports whether err is a failure to reach the server (as opposed
// to an answer from it), the kind worth retrying once the network is back.
func IsNetError(err error) bool {
	var ne *NetError
	return errors.As(err, &ne)
}

func convPath(id string, rest ...string) string {
	p := "/v1/conversations/" + url.PathEscape(id)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// Health checks that the server answers (GET /healthz).
func (a *API) Health(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.server+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return &NetError{Server: a.server, Err: err}
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return &wire.Error{Code: wire.CodeFromHTTPStatus(resp.StatusCode), Message: "health check: " + resp.Status}
	}
	return nil
}

// Register creates an account (POST /v1/register).
func (a *API) Register(ctx context.Context, req wire.RegisterRequest) (wire.AuthResponse, error) {
	var out wire.AuthResponse
	_, err := a.do(ctx, http.MethodPost, "/v1/register", nil, req, &out)
	return out, err
}

// Login exchanges a password for a token (POST /v1/login).
func (a *API) Login(ctx context.Context, req wire.LoginRequest) (wire.AuthResponse, error) {
	var out wire.AuthResponse
	_, err := a.do(ctx, http.MethodPost, "/v1/login", nil, req, &out)
	return out, err
}

// Logout revokes the presented token (POST /v1/logout).
func (a *API) Logout(ctx context.Context) error {
	_, err := a.do(ctx, http.MethodPost, "/v1/logout", nil, nil, nil)
	return err
}

// Me returns the caller's profile (GET /v1/me).
func (a *API) Me(ctx context.Context) (wire.Profile, error) {
	var out wire.Profile
	_, err := a.do(ctx, http.MethodGet, "/v1/me", nil, nil, &out)
	return out, err
}

// UpdateMe changes the caller's profile (PATCH /v1/me).
func (a *API) UpdateMe(ctx context.Context, upd wire.ProfileUpdate) (wire.Profile, error) {
	var out wire.Profile
	_, err := a.do(ctx, http.MethodPatch, "/v1/me", nil, upd, &out)
	return out, err
}

// User returns a user's profile (GET /v1/users/{id}).
func (a *API) User(ctx context.Context, userID string) (wire.Profile, error) {
	var out wire.Profile
	_, err := a.do(ctx, http.MethodGet, "/v1/users/"+url.PathEscape(userID), nil, nil, &out)
	return out, err
}

// CreateInvite makes a single-use invite code (POST /v1/invites, admins only).
func (a *API) CreateInvite(ctx context.Context) (wire.InviteResponse, error) {
	var out wire.InviteResponse
	_, err := a.do(ctx, http.MethodPost, "/v1/invites", nil, nil, &out)
	return out, err
}

// CreateConversation creates a group, or finds or creates a direct conversation
// (POST /v1/conversations).
func (a *API) CreateConversation(ctx context.Context, req wire.CreateConversationRequest) (wire.Conversation, error) {
	var out wire.Conversation
	_, err := a.do(ctx, http.MethodPost, "/v1/conversations", nil, req, &out)
	return out, err
}

// Direct finds or creates the direct conversation with peer.
func (a *API) Direct(ctx context.Context, peer string) (wire.Conversation, error) {
	return a.CreateConversation(ctx, wire.CreateConversationRequest{Type: wire.Direct, Members: []string{peer}})
}

// Conversation returns a conversation with its participants.
func (a *API) Conversation(ctx context.Context, id string) (wire.Conversation, error) {
	var out wire.Conversation
	_, err := a.do(ctx, http.MethodGet, convPath(id), nil, nil, &out)
	return out, err
}

// AddMembers adds users to a group (group admins).
func (a *API) AddMembers(ctx context.Context, id string, members []string) (wire.Conversation, error) {
	var out wire.Conversation
	_, err := a.do(ctx, http.MethodPost, convPath(id, "members"), nil, wire.MembersRequest{Members: members}, &out)
	return out, err
}

// RemoveMember removes a user from a group (group admins, or the user leaving).
func (a *API) RemoveMember(ctx context.Context, id, userID string) error {
	_, err := a.do(ctx, http.MethodDelete, convPath(id, "members", url.PathEscape(userID)), nil, nil, nil)
	return err
}

// SendMessage stores a message. The answer is the same for a resend of a known
// message_id; stored is true only when this call stored it (201, not 200).
func (a *API) SendMessage(ctx context.Context, conversationID string, req wire.SendRequest) (resp wire.SendResponse, stored bool, err error) {
	status, err := a.do(ctx, http.MethodPost, convPath(conversationID, "messages"), nil, req, &resp)
	return resp, status == http.StatusCreated, err
}

// SendNow stores a message over HTTP and returns once it is durable: the
// blocking path for scripts, with no cache and no socket. It resends with the
// same message_id, which the server stores once however often it arrives, as
// Retry does (an answer with a retry hint, maybe_stored or unavailable, no
// answer at all), for as long as ctx allows. So a script sending many lines
// paces itself on the server's hints instead of failing. When it gives up
// after an attempt whose outcome is unknown, the error is a
// *MaybeStoredError: resend with the same message_id, never a fresh one.
func (a *API) SendNow(ctx context.Context, conversationID string, req wire.SendRequest) (wire.SendResponse, error) {
	var resp wire.SendResponse
	unsure, err := retry(ctx, func(ctx context.Context) error {
		var err error
		resp, _, err = a.SendMessage(ctx, conversationID, req)
		return err
	}, true)
	if err != nil && unsure {
		return resp, &MaybeStoredError{MessageID: req.MessageID, Err: err}
	}
	return resp, err
}

// retryHint is how long the server asked to wait before a resend, for the
// errors a resend can cure; 0 otherwise.
func retryHint(err error) time.Duration {
	var e *wire.Error
	if !errors.As(err, &e) || e.RetryAfterMs <= 0 {
		return 0
	}
	if e.Code.Retryable() {
		return time.Duration(e.RetryAfterMs) * time.Millisecond
	}
	return 0
}

// CreateMedia reserves a media_id and a URL to upload one file of size
// bytes to (POST /v1/media).
func (a *API) CreateMedia(ctx context.Context, contentType string, size int64) (wire.MediaResponse, error) {
	var out wire.MediaResponse
	_, err := a.do(ctx, http.MethodPost, "/v1/media", nil, wire.MediaRequest{ContentType: contentType, Size: size}, &out)
	return out, err
}

// MediaUsage returns the user's media usage and limits (GET /v1/media/usage).
func (a *API) MediaUsage(ctx context.Context) (wire.MediaUsage, error) {
	var out wire.MediaUsage
	_, err := a.do(ctx, http.MethodGet, "/v1/media/usage", nil, nil, &out)
	return out, err
}

// UploadMedia stores a file for an attachment: it reserves a media_id, PUTs
// the bytes to the upload URL, and returns the media_id to send as a
// message's attachment. size is the body's length (-1 if unknown: the body
// is then read first, since the server reserves the size before the upload).
func (a *API) UploadMedia(ctx context.Context, contentType string, body io.Reader, size int64) (string, error) {
	if size < 0 {
		data, err := io.ReadAll(body)
		if err != nil {
			return "", fmt.Errorf("upload: %w", err)
		}
		body, size = bytes.NewReader(data), int64(len(data))
	}
	m, err := a.CreateMedia(ctx, contentType, size)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, m.UploadURL, body)
	if err != nil {
		return "", fmt.Errorf("upload: %w", err)
	}
	req.Header.Set("Content-Type", contentType)
	// Both are signed into S3 upload URLs (docs/protocol.md): single-use, and
	// served as a download.
	req.Header.Set("If-None-Match", "*")
	req.Header.Set("Content-Disposition", "attachment")
	req.ContentLength = size
	resp, err := a.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("upload: %w", ctx.Err())
		}
		return "", &NetError{Server: a.server, Err: fmt.Errorf("upload: %w", err)}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 300 {
		e := decodeError(resp, data)
		e.Message = "upload refused: " + e.Message
		return "", e
	}
	return m.MediaID, nil
}

// MediaURL returns a short-lived download URL for an attachment: where
// GET /v1/media/{media_id} redirects.
func (a *API) MediaURL(ctx context.Context, mediaID string) (string, error) {
	if err := wire.ValidateMediaID(mediaID); err != nil {
		return "", err
	}
	// The media_id has slashes of its own: the path is /v1/media/media/<user>/<token>.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.server+"/v1/media/"+mediaID, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	hc := *a.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", &NetError{Server: a.server, Err: err}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode < 300 || resp.StatusCode >= 400 {
		if resp.StatusCode < 300 {
			return "", fmt.Errorf("media %s: the server answered %s, not a redirect", mediaID, resp.Status)
		}
		return "", decodeError(resp, data)
	}
	loc, err := resp.Location()
	if err != nil {
		return "", fmt.Errorf("media %s: %w", mediaID, err)
	}
	return loc.String(), nil
}

// History returns a page of messages before beforeSeq (0: the newest), newest
// first; NextBeforeSeq is the cursor of the next older page.
func (a *API) History(ctx context.Context, conversationID string, beforeSeq int64, limit int) (wire.HistoryResponse, error) {
	q := url.Values{}
	if beforeSeq > 0 {
		q.Set("before_seq", strconv.FormatInt(beforeSeq, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out wire.HistoryResponse
	err := waitOutHints(ctx, func() error {
		_, err := a.do(ctx, http.MethodGet, convPath(conversationID, "messages"), q, nil, &out)
		return err
	})
	return out, err
}

// HistoryAfter returns messages after afterSeq, oldest first (catch-up).
func (a *API) HistoryAfter(ctx context.Context, conversationID string, afterSeq int64, limit int) (wire.HistoryResponse, error) {
	q := url.Values{"after_seq": {strconv.FormatInt(afterSeq, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out wire.HistoryResponse
	err := waitOutHints(ctx, func() error {
		_, err := a.do(ctx, http.MethodGet, convPath(conversationID, "messages"), q, nil, &out)
		return err
	})
	return out, err
}

// MarkDelivered moves the caller's delivered boundary forward.
func (a *API) MarkDelivered(ctx context.Context, conversationID string, seqNo int64) (wire.MemberStatus, error) {
	var out wire.MemberStatus
	_, err := a.do(ctx, http.MethodPost, convPath(conversationID, "delivered"), nil, wire.SeqRequest{SeqNo: seqNo}, &out)
	return out, err
}

// MarkRead moves the caller's read boundary forward (read implies delivered).
func (a *API) MarkRead(ctx context.Context, conversationID string, seqNo int64) (wire.MemberStatus, error) {
	var out wire.MemberStatus
	_, err := a.do(ctx, http.MethodPost, convPath(conversationID, "read"), nil, wire.SeqRequest{SeqNo: seqNo}, &out)
	return out, err
}

// Status returns every member's boundaries in a conversation.
func (a *API) Status(ctx context.Context, conversationID string) (wire.StatusResponse, error) {
	var out wire.StatusResponse
	_, err := a.do(ctx, http.MethodGet, convPath(conversationID, "status"), nil, nil, &out)
	return out, err
}

// Inbox returns up to limit conversations, most recent activity first (0: the
// server's default).
func (a *API) Inbox(ctx context.Context, limit int) (wire.InboxResponse, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out wire.InboxResponse
	err := waitOutHints(ctx, func() error {
		_, err := a.do(ctx, http.MethodGet, "/v1/inbox", q, nil, &out)
		return err
	})
	return out, err
}

// Bounds on waitOutHints: the server's per-user limits count one-second
// windows, so their hints are at most a second and one wait is enough for one
// reader; a longer hint (a proxy's, an overloaded server's) or a limit still
// refusing after a few waits is the caller's to handle.
const (
	maxReadHint  = 2 * time.Second
	maxReadWaits = 5
)

// waitOutHints runs read again after an answer that says when to retry
// (rate_limited past the server's per-user limit on history pages or inbox
// loads, overloaded, unavailable), once that time has passed, within
// maxReadHint and maxReadWaits and for as long as ctx allows. A read changes
// nothing, so asking again is always safe; the TUI going back many pages to an
// old message and `chat fetch` filling a whole conversation thus pace
// themselves on the server's hints instead of failing.
func waitOutHints(ctx context.Context, read func() error) error {
	for waits := 0; ; waits++ {
		err := read()
		hint := retryHint(err)
		if hint <= 0 || hint > maxReadHint || waits == maxReadWaits {
			return err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < hint {
			return err // the hint is past what the caller will wait: say why now
		}
		t := time.NewTimer(hint)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

// Package httpd is the server's transport: the JSON HTTP API under /v1/ and the
// WebSocket endpoint /v1/ws, both thin layers over server.Service. Errors map to
// HTTP statuses through wire.Code.HTTPStatus, the one table.
package httpd

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"context"
	"crypto/subtle"
	"github.com/chatterm/chat/internal/gopool"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/protocol"
	"github.com/chatterm/chat/wire"
	"net/url"
	"unicode/utf8"
)

// maxBodyBytes bounds any request body; message content has its own limit.
const maxBodyBytes = 1 << 20

// Handler serves the API.
type Handler struct {
	svc     *server.Service
	engine  *protocol.Engine // serves the WebSockets' frames
	log     *slog.Logger
	mux     *http.ServeMux
	writers *gopool.Pool // runs sockets' writers, which start with each burst of frames
	sockets *sockets
}

// Options tune the handler; zero values take the defaults.
type Options struct {
	// Metrics serves GET /metrics on this handler, to requests that bear
	// MetricsToken; with no token it is not served here (a separate listener,
	// node.Config.MetricsAddr, serves it without one).
	Metrics      http.Handler
	MetricsToken string
	// Caps on live WebSockets (docs/security.md): per user, per client
	// address, and in all. 0 takes DefaultSocketsPerUser / DefaultSocketsPerAddr
	// / no total cap; <0 disables a cap.
	SocketsPerUser, SocketsPerAddr, MaxSockets int
}

// maxParkedWriters bounds the socket writer goroutines kept between bursts.
const maxParkedWriters = 128

// New returns the handler for every route.
func New(svc *server.Service, engine *protocol.Engine, log *slog.Logger, opts Options) *Handler {
	capOr := func(v, def int) int {
		if v == 0 {
			return def
		}
		return max(v, 0)
	}
	h := &Handler{svc: svc, engine: engine, log: log, mux: http.NewServeMux(), writers: gopool.New(maxParkedWriters),
		sockets: newSockets(capOr(opts.SocketsPerUser, DefaultSocketsPerUser), capOr(opts.SocketsPerAddr, DefaultSocketsPerAddr), capOr(opts.MaxSockets, 0))}
	m := h.mux
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	if opts.Metrics != nil && opts.MetricsToken != "" {
		m.Handle("GET /metrics", requireToken(opts.MetricsToken, opts.Metrics))
	}
	m.HandleFunc("POST /v1/register", h.register)
	m.HandleFunc("POST /v1/login", h.login)
	m.HandleFunc("POST /v1/logout", h.logout)
	m.HandleFunc("GET /v1/me", h.authed(h.me))
	m.HandleFunc("PATCH /v1/me", h.authed(h.updateMe))
	m.HandleFunc("GET /v1/users/{user_id}", h.authed(h.profile))
	m.HandleFunc("POST /v1/invites", h.authed(h.invite))
	m.HandleFunc("POST /v1/password-reset", h.passwordReset)
	m.HandleFunc("GET /v1/admin/users", h.authed(h.adminUsers))
	m.HandleFunc("PATCH /v1/admin/users/{user_id}", h.authed(h.adminChangeUser))
	m.HandleFunc("DELETE /v1/admin/users/{user_id}/sessions", h.authed(h.adminRevokeSessions))
	m.HandleFunc("POST /v1/admin/users/{user_id}/password-reset", h.authed(h.adminResetPassword))
	m.HandleFunc("GET /v1/admin/invites", h.authed(h.adminInvites))
	m.HandleFunc("DELETE /v1/admin/invites/{id}", h.authed(h.adminRevokeInvite))
	m.HandleFunc("POST /v1/conversations", h.authed(h.createConversation))
	m.HandleFunc("GET /v1/conversations/{id}", h.authed(h.getConversation))
	m.HandleFunc("POST /v1/conversations/{id}/members", h.authed(h.addMembers))
	m.HandleFunc("DELETE /v1/conversations/{id}/members/{user_id}", h.authed(h.removeMember))
	m.HandleFunc("PUT /v1/conversations/{id}/members/{user_id}/role", h.authed(h.setRole))
	m.HandleFunc("PATCH /v1/conversations/{id}", h.authed(h.changeConversation))
	m.HandleFunc("POST /v1/conversations/{id}/join", h.authed(h.joinChannel))
	m.HandleFunc("GET /v1/channels", h.authed(h.listChannels))
	m.HandleFunc("POST /v1/conversations/{id}/messages", h.authed(h.send))
	m.HandleFunc("GET /v1/conversations/{id}/messages", h.authed(h.history))
	m.HandleFunc("POST /v1/conversations/{id}/delivered", h.authed(h.delivered))
	m.HandleFunc("POST /v1/conversations/{id}/read", h.authed(h.read))
	m.HandleFunc("GET /v1/conversations/{id}/status", h.authed(h.status))
	m.HandleFunc("GET /v1/conversations/{id}/presence", h.authed(h.presence))
	m.HandleFunc("GET /v1/inbox", h.authed(h.inbox))
	m.HandleFunc("GET /v1/mentions", h.authed(h.mentions))
	m.HandleFunc("GET /v1/conversations/{id}/mentions", h.authed(h.mentionSetting))
	m.HandleFunc("PUT /v1/conversations/{id}/mentions", h.authed(h.setMentionSetting))
	m.HandleFunc("POST /v1/media", h.authed(h.createMedia))
	m.HandleFunc("GET /v1/media/usage", h.authed(h.mediaUsage))
	m.HandleFunc("GET /v1/media/{id...}", h.authed(h.media))
	m.HandleFunc("GET /v1/ws", h.ws)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, wire.Errorf(wire.CodeNotFound, "no route %s %s; see docs/protocol.md", r.Method, r.URL.Path))
	})
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// JSON decoders and path matching would turn invalid UTF-8 into U+FFFD and
	// go on: refuse it instead, as the WebSocket does.
	if err := validUTF8(r); err != nil {
		h.fail(w, r, err)
		return
	}
	// A known path with the wrong method falls through to the catch-all; answer it
	// with a JSON error naming the problem rather than "no route".
	if _, pattern := h.mux.Handler(r); pattern == "/" && h.otherMethodMatches(r) {
		h.fail(w, r, wire.Errorf(wire.CodeInvalid, "method %s is not allowed on %s", r.Method, r.URL.Path))
		return
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) otherMethodMatches(r *http.Request) bool {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := h.mux.Handler(probe); p != "/" {
			return true
		}
	}
	return false
}

// Shutdown refuses new WebSockets and waits until the live ones are gone (their
// read loops have returned and called into the Service for the last time), or
// ctx ends. The Service's Shutdown closes them; the backends may be closed
// only after this returns.
func (h *Handler) Shutdown(ctx context.Context) error {
	if err := h.sockets.closeAndWait(ctx); err != nil {
		return err
	}
	h.writers.Close() // every socket's writers have returned: let the parked ones go
	return nil
}

// Sockets is the number of live WebSockets.
func (h *Handler) Sockets() int { return h.sockets.count() }

// requireToken serves next only to requests bearing token.
func requireToken(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(bearer(r)), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "metrics need Authorization: Bearer <metrics token>\n", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authed wraps a handler that needs a logged-in user.
func (h *Handler) authed(next func(w http.ResponseWriter, r *http.Request, user string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		user, err := h.svc.Authenticate(r.Context(), bearer(r))
		if err != nil {
			h.fail(w, r, err)
			return
		}
		next(w, r, user)
	}
}

// bearer is the token of the Authorization header. Only the WebSocket route
// also takes one from the query string (wsToken): browsers cannot set headers
// on a WebSocket, and a token in a URL ends up in logs and histories.
func bearer(r *http.Request) string {
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

func wsToken(r *http.Request) string {
	if t := bearer(r); t != "" {
		return t
	}
	return r.URL.Query().Get("token")
}

// validUTF8 refuses a path or query string that is not valid UTF-8 once
// unescaped.
func validUTF8(r *http.Request) error {
	if !utf8.ValidString(r.URL.Path) {
		return wire.Errorf(wire.CodeInvalid, "the request path is not valid UTF-8")
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return wire.Errorf(wire.CodeInvalid, "the query string is malformed: %v", err)
	}
	for k, vs := range q {
		if !utf8.ValidString(k) {
			return wire.Errorf(wire.CodeInvalid, "the query string is not valid UTF-8")
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return wire.Errorf(wire.CodeInvalid, "query parameter %s is not valid UTF-8", k)
			}
		}
	}
	return nil
}

// decode reads a JSON body strictly into v.
func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return wire.Errorf(wire.CodeTooLarge, "request body is over %d bytes", maxBodyBytes)
		}
		return wire.Errorf(wire.CodeInvalid, "reading request body: %v", err)
	}
	if !utf8.Valid(body) {
		return wire.Errorf(wire.CodeInvalid, "request body is not valid UTF-8")
	}
	return wire.DecodeJSON(body, v)
}

func (h *Handler) reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	if v == nil {
		w.WriteHeader(status)
		return
	}
	started := false
	err := wire.WriteJSON(w, v, func(size int) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.WriteHeader(status)
		started = true
	})
	if err != nil && !started {
		// Nothing is written yet: the client still gets a JSON error with a code.
		h.log.Error("encode answer", "type", fmt.Sprintf("%T", v), "err", err)
		h.reply(w, http.StatusInternalServerError, wire.ErrorResponse{Error: wire.Errorf(wire.CodeInternal,
			"the server could not encode its answer; the request may have taken effect, so check before retrying")})
	}
}

// fail writes the JSON error for err; only internal errors are logged.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := wire.AsError(err)
	if e.Code == wire.CodeInternal {
		h.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if e.RetryAfterMs > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt((e.RetryAfterMs+999)/1000, 10))
	}
	h.reply(w, e.Code.HTTPStatus(), wire.ErrorResponse{Error: e})
}

func queryInt(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, wire.Errorf(wire.CodeInvalid, "%s must be a non-negative integer, got %q", name, v)
	}
	return n, nil
}

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

	"github.com/chatterm/chat/internal/gopool"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// maxBodyBytes bounds any request body; message content has its own limit.
const maxBodyBytes = 1 << 20

// Handler serves the API.
type Handler struct {
	svc     *server.Service
	log     *slog.Logger
	mux     *http.ServeMux
	writers *gopool.Pool // runs sockets' writers, which start with each burst of frames
}

// maxParkedWriters bounds the socket writer goroutines kept between bursts.
const maxParkedWriters = 128

// New returns the handler for every route. metrics serves /metrics (nil: 404).
func New(svc *server.Service, log *slog.Logger, metrics http.Handler) *Handler {
	h := &Handler{svc: svc, log: log, mux: http.NewServeMux(), writers: gopool.New(maxParkedWriters)}
	m := h.mux
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	if metrics != nil {
		m.Handle("GET /metrics", metrics)
	}
	m.HandleFunc("POST /v1/register", h.register)
	m.HandleFunc("POST /v1/login", h.login)
	m.HandleFunc("POST /v1/logout", h.logout)
	m.HandleFunc("GET /v1/me", h.authed(h.me))
	m.HandleFunc("PATCH /v1/me", h.authed(h.updateMe))
	m.HandleFunc("GET /v1/users/{user_id}", h.authed(h.profile))
	m.HandleFunc("POST /v1/invites", h.authed(h.invite))
	m.HandleFunc("POST /v1/conversations", h.authed(h.createConversation))
	m.HandleFunc("GET /v1/conversations/{id}", h.authed(h.getConversation))
	m.HandleFunc("POST /v1/conversations/{id}/members", h.authed(h.addMembers))
	m.HandleFunc("DELETE /v1/conversations/{id}/members/{user_id}", h.authed(h.removeMember))
	m.HandleFunc("POST /v1/conversations/{id}/messages", h.authed(h.send))
	m.HandleFunc("GET /v1/conversations/{id}/messages", h.authed(h.history))
	m.HandleFunc("POST /v1/conversations/{id}/delivered", h.authed(h.delivered))
	m.HandleFunc("POST /v1/conversations/{id}/read", h.authed(h.read))
	m.HandleFunc("GET /v1/conversations/{id}/status", h.authed(h.status))
	m.HandleFunc("GET /v1/inbox", h.authed(h.inbox))
	m.HandleFunc("POST /v1/media", h.authed(h.createMedia))
	m.HandleFunc("GET /v1/media/{id...}", h.authed(h.media))
	m.HandleFunc("GET /v1/ws", h.ws)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, wire.Errorf(wire.CodeNotFound, "no route %s %s; see docs/protocol.md", r.Method, r.URL.Path))
	})
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

func bearer(r *http.Request) string {
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return r.URL.Query().Get("token")
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

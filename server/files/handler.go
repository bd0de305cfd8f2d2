package files

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// UploadTimeout bounds reading one upload's body: 32 MiB at about 140 KiB/s.
const UploadTimeout = 4 * time.Minute

// Handler serves presigned GET and PUT requests. Mount it where BaseURL points,
// with that prefix stripped, so the request path is the object key:
//
//	mux.Handle("/v1/blobs/", http.StripPrefix("/v1/blobs/", store.Handler()))
func (s *Store) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, "/")
		if err := CheckKey(key); err != nil {
			writeError(w, wire.Errorf(wire.CodeInvalid, "bad object key"))
			return
		}
		ct := ""
		if r.Method == http.MethodPut {
			ct = r.Header.Get("Content-Type")
		}
		q := r.URL.Query()
		size, err := s.Verify(r.Method, key, ct, q.Get("exp"), q.Get("size"), q.Get("sig"))
		switch {
		case errors.Is(err, ErrExpired):
			writeError(w, wire.Errorf(wire.CodeForbidden, "presigned URL expired"))
			return
		case err != nil:
			writeError(w, wire.Errorf(wire.CodeForbidden, "presigned URL not valid for this request"))
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			data, ct, err := s.read(key)
			if errors.Is(err, server.ErrNotFound) {
				writeError(w, wire.Errorf(wire.CodeNotFound, "no such object"))
				return
			}
			if err != nil {
				writeError(w, err)
				return
			}
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			// Media comes from other people: a browser following the link
			// downloads it, and never renders it (an HTML or SVG upload would
			// otherwise run as a page of this server's origin).
			w.Header().Set("Content-Disposition", "attachment")
			w.Header().Set("Content-Security-Policy", "sandbox")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Cache-Control", "private, max-age=3600")
			if r.Method == http.MethodGet {
				_, _ = w.Write(data)
			}
		case http.MethodPut:
			// The server's deadline for a request (node's BodyTimeout) suits
			// JSON bodies, not a file of up to maxSize on a slow uplink. Only
			// the holder of a signed upload URL gets this far.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(UploadTimeout))
			// The URL is for exactly size bytes: what the reservation counted
			// against the uploader's quota (POST /v1/media).
			data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, min(size, s.maxSize)))
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, wire.Errorf(wire.CodeTooLarge, "object over the %d bytes this upload URL is for", min(size, s.maxSize)))
				return
			}
			if err != nil {
				writeError(w, wire.Errorf(wire.CodeInvalid, "reading body: %v", err))
				return
			}
			if int64(len(data)) != size {
				writeError(w, wire.Errorf(wire.CodeInvalid, "object is %d bytes; this upload URL is for %d", len(data), size))
				return
			}
			// An upload URL is single-use: once the object exists (it may
			// already be attached to a sent message) it cannot be replaced.
			if _, _, err := s.read(key); err == nil {
				writeError(w, wire.Errorf(wire.CodeConflict, "this upload URL was used already; ask for a new one (POST /v1/media)"))
				return
			}
			if err := s.Put(r.Context(), key, data, ct); err != nil {
				writeError(w, err)
				return
			}
			w.WriteHeader(http.StatusOK)
		default:
			w.Header().Set("Allow", "GET, HEAD, PUT")
			writeError(w, wire.Errorf(wire.CodeInvalid, "method %s not allowed", r.Method))
		}
	})
}

func writeError(w http.ResponseWriter, err error) {
	e := wire.AsError(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Code.HTTPStatus())
	_ = json.NewEncoder(w).Encode(wire.ErrorResponse{Error: e})
}

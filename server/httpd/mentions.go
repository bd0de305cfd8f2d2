package httpd

import (
	"net/http"
	"time"

	"github.com/chatterm/chat/wire"
)

// mentions lists the messages mentioning the caller, newest first
// (?cursor=<next of the last page> for the next page, or the older
// ?before=<RFC 3339 time>; ?limit=).
func (h *Handler) mentions(w http.ResponseWriter, r *http.Request, user string) {
	limit, err := queryInt(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var after wire.MentionCursor
	q := r.URL.Query()
	switch cursor, before := q.Get("cursor"), q.Get("before"); {
	case cursor != "" && before != "":
		h.fail(w, r, wire.Errorf(wire.CodeInvalid, "give cursor or before, not both"))
		return
	case cursor != "":
		if after, err = wire.ParseMentionCursor(cursor); err != nil {
			h.fail(w, r, err)
			return
		}
	case before != "":
		if after.Time, err = time.Parse(time.RFC3339Nano, before); err != nil {
			h.fail(w, r, wire.Errorf(wire.CodeInvalid, "before must be an RFC 3339 time (next_before of the last page)"))
			return
		}
	}
	resp, err := h.svc.Mentions(r.Context(), user, after, int(min(limit, 1<<20)))
	h.answer(w, r, http.StatusOK, resp, err)
}

func (h *Handler) mentionSetting(w http.ResponseWriter, r *http.Request, user string) {
	resp, err := h.svc.MentionSetting(r.Context(), user, r.PathValue("id"))
	h.answer(w, r, http.StatusOK, resp, err)
}

func (h *Handler) setMentionSetting(w http.ResponseWriter, r *http.Request, user string) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, user string, req wire.MentionSetting) {
		resp, err := h.svc.SetMentionSetting(r.Context(), user, r.PathValue("id"), req)
		h.answer(w, r, http.StatusOK, resp, err)
	})(w, r, user)
}

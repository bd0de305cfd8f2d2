package httpd

import (
	"net/http"

	"github.com/chatterm/chat/wire"
)

// The routes of channels and of the group changes that leave a membership
// event in the log (server/channels.go, server/membership_events.go).

func (h *Handler) listChannels(w http.ResponseWriter, r *http.Request, user string) {
	limit, err := queryInt(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	resp, err := h.svc.ListChannels(r.Context(), user, r.URL.Query().Get("after"), int(limit))
	h.answer(w, r, http.StatusOK, resp, err)
}

func (h *Handler) joinChannel(w http.ResponseWriter, r *http.Request, user string) {
	conv, err := h.svc.JoinChannel(r.Context(), user, r.PathValue("id"))
	h.answer(w, r, http.StatusOK, conv, err)
}

func (h *Handler) changeConversation(w http.ResponseWriter, r *http.Request, user string) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, user string, req wire.ConversationChange) {
		conv, err := h.svc.ChangeConversation(r.Context(), user, r.PathValue("id"), req)
		h.answer(w, r, http.StatusOK, conv, err)
	})(w, r, user)
}

func (h *Handler) setRole(w http.ResponseWriter, r *http.Request, user string) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, user string, req wire.RoleRequest) {
		conv, err := h.svc.SetRole(r.Context(), user, r.PathValue("id"), r.PathValue("user_id"), req.Role)
		h.answer(w, r, http.StatusOK, conv, err)
	})(w, r, user)
}

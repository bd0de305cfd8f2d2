package httpd

import (
	"net/http"

	"github.com/chatterm/chat/wire"
)

// The server administration routes (docs/protocol.md): admins only, checked
// by the Service.

func (h *Handler) adminUsers(w http.ResponseWriter, r *http.Request, user string) {
	resp, err := h.svc.AdminUsers(r.Context(), user)
	h.answer(w, r, http.StatusOK, resp, err)
}

func (h *Handler) adminChangeUser(w http.ResponseWriter, r *http.Request, user string) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, user string, req wire.AdminUserChange) {
		resp, err := h.svc.AdminChangeUser(r.Context(), user, r.PathValue("user_id"), req)
		h.answer(w, r, http.StatusOK, resp, err)
	})(w, r, user)
}

func (h *Handler) adminRevokeSessions(w http.ResponseWriter, r *http.Request, user string) {
	err := h.svc.AdminRevokeSessions(r.Context(), user, r.PathValue("user_id"))
	h.answer(w, r, http.StatusNoContent, nil, err)
}

func (h *Handler) adminResetPassword(w http.ResponseWriter, r *http.Request, user string) {
	resp, err := h.svc.AdminResetPassword(r.Context(), user, r.PathValue("user_id"))
	h.answer(w, r, http.StatusCreated, resp, err)
}

func (h *Handler) adminInvites(w http.ResponseWriter, r *http.Request, user string) {
	resp, err := h.svc.AdminInvites(r.Context(), user)
	h.answer(w, r, http.StatusOK, resp, err)
}

func (h *Handler) adminRevokeInvite(w http.ResponseWriter, r *http.Request, user string) {
	err := h.svc.AdminRevokeInvite(r.Context(), user, r.PathValue("id"))
	h.answer(w, r, http.StatusNoContent, nil, err)
}

func (h *Handler) passwordReset(w http.ResponseWriter, r *http.Request) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, _ string, req wire.PasswordResetRequest) {
		resp, err := h.svc.ResetPassword(r.Context(), req, clientAddr(r))
		h.answer(w, r, http.StatusOK, resp, err)
	})(w, r, "")
}

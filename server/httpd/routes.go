package httpd

import (
	"net/http"

	"github.com/chatterm/chat/wire"
)

func (h *Handler) register(w http.ResponseWriter, r *http.Request) {
	var req wire.RegisterRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	resp, err := h.svc.Register(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusCreated, resp)
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	var req wire.LoginRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	resp, err := h.svc.Login(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusOK, resp)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	tok := bearer(r)
	user, err := h.svc.Authenticate(r.Context(), tok)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.svc.Logout(r.Context(), user, tok); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) me(w http.ResponseWriter, r *http.Request, user string) {
	p, err := h.svc.Profile(r.Context(), user)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusOK, p)
}

func (h *Handler) updateMe(w http.ResponseWriter, r *http.Request, user string) {
	var req wire.ProfileUpdate
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	p, err := h.svc.UpdateProfile(r.Context(), user, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusOK, p)
}

func (h *Handler) profile(w http.ResponseWriter, r *http.Request, _ string) {
	p, err := h.svc.Profile(r.Context(), r.PathValue("user_id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusOK, p)
}

func (h *Handler) invite(w http.ResponseWriter, r *http.Request, user string) {
	resp, err := h.svc.CreateInvite(r.Context(), user)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusCreated, resp)
}

func (h *Handler) createConversation(w http.ResponseWriter, r *http.Request, user string) {
	var req wire.CreateConversationRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	conv, created, err := h.svc.CreateConversation(r.Context(), user, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	h.reply(w, status, conv)
}

func (h *Handler) getConversation(w http.ResponseWriter, r *http.Request, user string) {
	conv, err := h.svc.GetConversation(r.Context(), user, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusOK, conv)
}

func (h *Handler) addMembers(w http.ResponseWriter, r *http.Request, user string) {
	var req wire.MembersRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if len(req.Members) == 0 {
		h.fail(w, r, wire.Errorf(wire.CodeInvalid, "members is empty"))
		return
	}
	conv, err := h.svc.AddMembers(r.Context(), user, r.PathValue("id"), req.Members)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusOK, conv)
}

func (h *Handler) removeMember(w http.ResponseWriter, r *http.Request, user string) {
	if err := h.svc.RemoveMember(r.Context(), user, r.PathValue("id"), r.PathValue("user_id")); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) send(w http.ResponseWriter, r *http.Request, user string) {
	var req wire.SendRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	resp, created, err := h.svc.Send(r.Context(), user, r.PathValue("id"), req, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	h.reply(w, status, resp)
}

func (h *Handler) history(w http.ResponseWriter, r *http.Request, user string) {
	before, err := queryInt(r, "before_seq")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	after, err := queryInt(r, "after_seq")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if r.URL.Query().Has("limit") && limit == 0 {
		h.fail(w, r, wire.Errorf(wire.CodeInvalid, "limit must be between 1 and %d", wire.MaxPageSize))
		return
	}
	resp, err := h.svc.History(r.Context(), user, r.PathValue("id"), before, after, int(min(limit, 1<<20)))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusOK, resp)
}

func (h *Handler) delivered(w http.ResponseWriter, r *http.Request, user string) {
	h.boundary(w, r, user, false)
}
func (h *Handler) read(w http.ResponseWriter, r *http.Request, user string) {
	h.boundary(w, r, user, true)
}

func (h *Handler) boundary(w http.ResponseWriter, r *http.Request, user string, read bool) {
	var req wire.SeqRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.SeqNo <= 0 {
		h.fail(w, r, wire.Errorf(wire.CodeInvalid, "seq_no must be a positive integer"))
		return
	}
	mark := h.svc.MarkDelivered
	if read {
		mark = h.svc.MarkRead
	}
	st, err := mark(r.Context(), user, r.PathValue("id"), req.SeqNo)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusOK, st)
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request, user string) {
	resp, err := h.svc.Status(r.Context(), user, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusOK, resp)
}

func (h *Handler) inbox(w http.ResponseWriter, r *http.Request, user string) {
	limit, err := queryInt(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	resp, err := h.svc.Inbox(r.Context(), user, int(min(limit, 1<<20)))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusOK, resp)
}

func (h *Handler) createMedia(w http.ResponseWriter, r *http.Request, user string) {
	var req wire.MediaRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	resp, err := h.svc.CreateMedia(r.Context(), user, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.reply(w, http.StatusCreated, resp)
}

// media redirects to a short-lived download URL (curl -L follows it).
func (h *Handler) media(w http.ResponseWriter, r *http.Request, _ string) {
	url, err := h.svc.MediaURL(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, url, http.StatusFound)
}

package httpd

import (
	"context"
	"net/http"

	"github.com/chatterm/chat/wire"
)

// answer writes resp with status, or err as the JSON error; a nil resp is an
// empty answer (204).
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, status int, resp any, err error) {
	switch {
	case err != nil:
		h.fail(w, r, err)
	case resp == nil:
		w.WriteHeader(status)
	default:
		h.reply(w, status, resp)
	}
}

// withBody decodes the request body strictly into a Req before calling fn.
func withBody[Req any](h *Handler, fn func(w http.ResponseWriter, r *http.Request, user string, req Req)) func(http.ResponseWriter, *http.Request, string) {
	return func(w http.ResponseWriter, r *http.Request, user string) {
		var req Req
		if err := decode(r, &req); err != nil {
			h.fail(w, r, err)
			return
		}
		fn(w, r, user, req)
	}
}

// createdOr is 201 when something was created, else 200 (an idempotent repeat).
func createdOr(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

func (h *Handler) register(w http.ResponseWriter, r *http.Request) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, _ string, req wire.RegisterRequest) {
		resp, err := h.svc.Register(r.Context(), req, clientAddr(r))
		h.answer(w, r, http.StatusCreated, resp, err)
	})(w, r, "")
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, _ string, req wire.LoginRequest) {
		resp, err := h.svc.Login(r.Context(), req, clientAddr(r))
		h.answer(w, r, http.StatusOK, resp, err)
	})(w, r, "")
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	tok := bearer(r)
	user, err := h.svc.Authenticate(r.Context(), tok)
	if err == nil {
		err = h.svc.Logout(r.Context(), user, tok)
	}
	h.answer(w, r, http.StatusNoContent, nil, err)
}

func (h *Handler) me(w http.ResponseWriter, r *http.Request, user string) {
	p, err := h.svc.Me(r.Context(), user)
	h.answer(w, r, http.StatusOK, p, err)
}

func (h *Handler) updateMe(w http.ResponseWriter, r *http.Request, user string) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, user string, req wire.ProfileUpdate) {
		p, err := h.svc.UpdateProfile(r.Context(), user, req)
		h.answer(w, r, http.StatusOK, p, err)
	})(w, r, user)
}

func (h *Handler) profile(w http.ResponseWriter, r *http.Request, _ string) {
	p, err := h.svc.Profile(r.Context(), r.PathValue("user_id"))
	h.answer(w, r, http.StatusOK, p, err)
}

func (h *Handler) invite(w http.ResponseWriter, r *http.Request, user string) {
	resp, err := h.svc.CreateInvite(r.Context(), user)
	h.answer(w, r, http.StatusCreated, resp, err)
}

func (h *Handler) createConversation(w http.ResponseWriter, r *http.Request, user string) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, user string, req wire.CreateConversationRequest) {
		conv, created, err := h.svc.CreateConversation(r.Context(), user, req)
		h.answer(w, r, createdOr(created), conv, err)
	})(w, r, user)
}

func (h *Handler) getConversation(w http.ResponseWriter, r *http.Request, user string) {
	conv, err := h.svc.GetConversation(r.Context(), user, r.PathValue("id"))
	h.answer(w, r, http.StatusOK, conv, err)
}

func (h *Handler) addMembers(w http.ResponseWriter, r *http.Request, user string) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, user string, req wire.MembersRequest) {
		if len(req.Members) == 0 {
			h.fail(w, r, wire.Errorf(wire.CodeInvalid, "members is empty"))
			return
		}
		conv, err := h.svc.AddMembers(r.Context(), user, r.PathValue("id"), req.Members)
		h.answer(w, r, http.StatusOK, conv, err)
	})(w, r, user)
}

func (h *Handler) removeMember(w http.ResponseWriter, r *http.Request, user string) {
	err := h.svc.RemoveMember(r.Context(), user, r.PathValue("id"), r.PathValue("user_id"))
	h.answer(w, r, http.StatusNoContent, nil, err)
}

func (h *Handler) send(w http.ResponseWriter, r *http.Request, user string) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, user string, req wire.SendRequest) {
		resp, created, err := h.svc.Send(r.Context(), user, r.PathValue("id"), req, nil)
		h.answer(w, r, createdOr(created), resp, err)
	})(w, r, user)
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
	h.answer(w, r, http.StatusOK, resp, err)
}

func (h *Handler) delivered(w http.ResponseWriter, r *http.Request, user string) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, user string, req wire.SeqRequest) {
		h.boundary(w, r, user, req, h.svc.MarkDelivered)
	})(w, r, user)
}

func (h *Handler) read(w http.ResponseWriter, r *http.Request, user string) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, user string, req wire.SeqRequest) {
		h.boundary(w, r, user, req, h.svc.MarkRead)
	})(w, r, user)
}

func (h *Handler) boundary(w http.ResponseWriter, r *http.Request, user string, req wire.SeqRequest,
	mark func(ctx context.Context, user, conv string, seq int64) (wire.MemberStatus, error)) {
	if req.SeqNo <= 0 {
		h.fail(w, r, wire.Errorf(wire.CodeInvalid, "seq_no must be a positive integer"))
		return
	}
	st, err := mark(r.Context(), user, r.PathValue("id"), req.SeqNo)
	h.answer(w, r, http.StatusOK, st, err)
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request, user string) {
	resp, err := h.svc.Status(r.Context(), user, r.PathValue("id"))
	h.answer(w, r, http.StatusOK, resp, err)
}

func (h *Handler) presence(w http.ResponseWriter, r *http.Request, user string) {
	resp, err := h.svc.Presence(r.Context(), user, r.PathValue("id"))
	h.answer(w, r, http.StatusOK, resp, err)
}

func (h *Handler) inbox(w http.ResponseWriter, r *http.Request, user string) {
	limit, err := queryInt(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	resp, err := h.svc.Inbox(r.Context(), user, int(min(limit, 1<<20)))
	h.answer(w, r, http.StatusOK, resp, err)
}

func (h *Handler) createMedia(w http.ResponseWriter, r *http.Request, user string) {
	withBody(h, func(w http.ResponseWriter, r *http.Request, user string, req wire.MediaRequest) {
		resp, err := h.svc.CreateMedia(r.Context(), user, req)
		h.answer(w, r, http.StatusCreated, resp, err)
	})(w, r, user)
}

// mediaUsage shows the user's media usage and limits (?user= for an admin).
func (h *Handler) mediaUsage(w http.ResponseWriter, r *http.Request, user string) {
	resp, err := h.svc.MediaUsage(r.Context(), user, r.URL.Query().Get("user"))
	h.answer(w, r, http.StatusOK, resp, err)
}

// media redirects to a short-lived download URL (curl -L follows it).
func (h *Handler) media(w http.ResponseWriter, r *http.Request, user string) {
	url, err := h.svc.MediaURL(r.Context(), user, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, url, http.StatusFound)
}

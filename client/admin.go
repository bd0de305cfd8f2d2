package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/chatterm/chat/wire"
)

// Server administration (admins only; docs/protocol.md).

// AdminUsers lists every account (GET /v1/admin/users).
func (a *API) AdminUsers(ctx context.Context) (wire.AdminUsersResponse, error) {
	var out wire.AdminUsersResponse
	_, err := a.do(ctx, http.MethodGet, "/v1/admin/users", nil, nil, &out)
	return out, err
}

// AdminChangeUser disables or enables an account, or grants or takes its
// admin right (PATCH /v1/admin/users/{user_id}).
func (a *API) AdminChangeUser(ctx context.Context, userID string, ch wire.AdminUserChange) (wire.AdminUser, error) {
	var out wire.AdminUser
	_, err := a.do(ctx, http.MethodPatch, "/v1/admin/users/"+url.PathEscape(userID), nil, ch, &out)
	return out, err
}

// AdminRevokeSessions logs a user out everywhere (DELETE /v1/admin/users/{user_id}/sessions).
func (a *API) AdminRevokeSessions(ctx context.Context, userID string) error {
	_, err := a.do(ctx, http.MethodDelete, "/v1/admin/users/"+url.PathEscape(userID)+"/sessions", nil, nil, nil)
	return err
}

// AdminResetPassword makes a one-time password-reset code for a user
// (POST /v1/admin/users/{user_id}/password-reset).
func (a *API) AdminResetPassword(ctx context.Context, userID string) (wire.PasswordResetCode, error) {
	var out wire.PasswordResetCode
	_, err := a.do(ctx, http.MethodPost, "/v1/admin/users/"+url.PathEscape(userID)+"/password-reset", nil, nil, &out)
	return out, err
}

// AdminInvites lists the unused invites (GET /v1/admin/invites).
func (a *API) AdminInvites(ctx context.Context) (wire.InvitesResponse, error) {
	var out wire.InvitesResponse
	_, err := a.do(ctx, http.MethodGet, "/v1/admin/invites", nil, nil, &out)
	return out, err
}

// AdminRevokeInvite makes an invite unusable (DELETE /v1/admin/invites/{id}).
func (a *API) AdminRevokeInvite(ctx context.Context, id string) error {
	_, err := a.do(ctx, http.MethodDelete, "/v1/admin/invites/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// ResetPassword sets a new password with an admin's reset code and logs in
// (POST /v1/password-reset; no token needed).
func (a *API) ResetPassword(ctx context.Context, req wire.PasswordResetRequest) (wire.AuthResponse, error) {
	var out wire.AuthResponse
	_, err := a.do(ctx, http.MethodPost, "/v1/password-reset", nil, req, &out)
	return out, err
}

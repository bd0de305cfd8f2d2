package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// resetCodeTTL is how long a password-reset code an admin made stays good.
const resetCodeTTL = 24 * time.Hour

// requireServerAdmin checks that userID administers the server.
func (s *Service) requireServerAdmin(ctx context.Context, userID string) error {
	u, err := s.store.GetUser(ctx, userID)
	if err != nil {
		return s.notFoundOr(err, "user", userID)
	}
	if !u.Admin {
		return wire.Errorf(wire.CodeForbidden, "only a server admin can do that")
	}
	return nil
}

// AdminUsers lists every account with whether it is online.
func (s *Service) AdminUsers(ctx context.Context, admin string) (wire.AdminUsersResponse, error) {
	if err := s.requireServerAdmin(ctx, admin); err != nil {
		return wire.AdminUsersResponse{}, err
	}
	users, err := s.store.ListUsers(ctx)
	if err != nil {
		return wire.AdminUsersResponse{}, s.internal("list users", err)
	}
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	nodes, err := s.cfg.Registry.Nodes(ctx, ids)
	if err != nil {
		nodes = nil // online unknown: shown as not online
	}
	out := wire.AdminUsersResponse{Users: make([]wire.AdminUser, len(users))}
	for i, u := range users {
		out.Users[i] = adminUser(u, len(nodes[u.ID]) > 0)
	}
	return out, nil
}

func adminUser(u User, online bool) wire.AdminUser {
	return wire.AdminUser{UserID: u.ID, DisplayName: u.DisplayName, Admin: u.Admin, Disabled: u.Disabled, Online: online, CreatedAt: u.CreatedAt.UTC()}
}

// AdminChangeUser disables or enables an account (disabling ends its
// sessions at once, on every node), or grants or takes its admin right. An
// admin cannot do either to themself: another admin must, so a server never
// locks its last admin out by mistake.
func (s *Service) AdminChangeUser(ctx context.Context, admin, target string, ch wire.AdminUserChange) (wire.AdminUser, error) {
	if err := s.requireServerAdmin(ctx, admin); err != nil {
		return wire.AdminUser{}, err
	}
	if ch.Disabled == nil && ch.Admin == nil {
		return wire.AdminUser{}, wire.Errorf(wire.CodeInvalid, "nothing to change: give disabled or admin")
	}
	if target == admin && (ch.Disabled != nil && *ch.Disabled || ch.Admin != nil && !*ch.Admin) {
		return wire.AdminUser{}, wire.Errorf(wire.CodeForbidden, "you cannot disable yourself or give up your own admin right; another admin can")
	}
	u, err := s.store.UpdateProfile(ctx, target, ProfileChange{Disabled: ch.Disabled, Admin: ch.Admin})
	if err != nil {
		return wire.AdminUser{}, s.notFoundOr(err, "user", target)
	}
	s.log.Info("account changed by an admin", "admin", admin, "user", target, "disabled", u.Disabled, "is_admin", u.Admin)
	switch {
	case ch.Disabled != nil && *ch.Disabled:
		// The tokens are kept, marked, so the user's clients are told the
		// account is disabled instead of being asked to log in again.
		if err := s.store.DisableUserTokens(ctx, target); err != nil {
			return wire.AdminUser{}, s.internal("disable sessions", err)
		}
		if err := s.endSessions(ctx, target, "account disabled by an admin", false); err != nil {
			return wire.AdminUser{}, err
		}
	case ch.Disabled != nil:
		// Enabled again: the marked tokens go; the user logs in afresh, as
		// after any ended session.
		if err := s.store.DeleteUserTokens(ctx, target); err != nil {
			return wire.AdminUser{}, s.internal("enable account", err)
		}
	}
	return adminUser(u, false), nil
}

// AdminRevokeSessions logs a user out everywhere: every token is void and
// every live connection closed (4001, log in again).
func (s *Service) AdminRevokeSessions(ctx context.Context, admin, target string) error {
	if err := s.requireServerAdmin(ctx, admin); err != nil {
		return err
	}
	if _, err := s.store.GetUser(ctx, target); err != nil {
		return s.notFoundOr(err, "user", target)
	}
	s.log.Info("sessions revoked by an admin", "admin", admin, "user", target)
	return s.endSessions(ctx, target, "signed out by an admin", true)
}

// AdminResetPassword makes a one-time code with which the user sets a new
// password (POST /v1/password-reset) within resetCodeTTL; their sessions end
// and their old password stops working now, as it may be someone else's.
func (s *Service) AdminResetPassword(ctx context.Context, admin, target string) (wire.PasswordResetCode, error) {
	if err := s.requireServerAdmin(ctx, admin); err != nil {
		return wire.PasswordResetCode{}, err
	}
	code := rand.Text()
	hash, exp := HashSecret(code), s.cfg.Now().Add(resetCodeTTL)
	// The old password goes in the same write: a reset is made because it is
	// lost or known to someone else, and it must not log anyone in while the
	// code waits to be used. The stand-in is the hash of a secret nobody
	// keeps, so a login tried meanwhile costs what a wrong password costs and
	// is answered the same.
	void, err := s.pw.hash(ctx, rand.Text())
	if err != nil {
		return wire.PasswordResetCode{}, err
	}
	if _, err := s.store.UpdateProfile(ctx, target, ProfileChange{PasswordHash: void, ResetHash: &hash, ResetExpires: &exp}); err != nil {
		return wire.PasswordResetCode{}, s.notFoundOr(err, "user", target)
	}
	s.log.Info("password reset code made by an admin", "admin", admin, "user", target)
	if err := s.endSessions(ctx, target, "password reset by an admin", true); err != nil {
		return wire.PasswordResetCode{}, err
	}
	return wire.PasswordResetCode{UserID: target, Code: code, ExpiresAt: exp.UTC()}, nil
}

// ResetPassword sets a new password with a code from AdminResetPassword, once,
// and logs the user in. A wrong, used or expired code, or a disabled account,
// is one answer: it tells nothing of which.
func (s *Service) ResetPassword(ctx context.Context, req wire.PasswordResetRequest, from string) (wire.AuthResponse, error) {
	bad := wire.Errorf(wire.CodeUnauthorized, "the reset code is wrong, used or expired; ask an admin for a new one")
	if wire.ValidateUserID(req.UserID) != nil || req.Code == "" {
		return wire.AuthResponse{}, bad
	}
	if n := len(req.Password); n < wire.MinPasswordLen || n > wire.MaxPasswordLen {
		return wire.AuthResponse{}, wire.Errorf(wire.CodeInvalid, "password must be %d to %d bytes long", wire.MinPasswordLen, wire.MaxPasswordLen)
	}
	if err := s.allowAuth(ctx, from); err != nil {
		return wire.AuthResponse{}, err
	}
	if ok, retry, err := s.cfg.Rate.Allow(ctx, "login:"+req.UserID, loginsPerSecond); err == nil && !ok {
		return wire.AuthResponse{}, &wire.Error{Code: wire.CodeRateLimited, Message: "too many attempts; wait and retry", RetryAfterMs: retryAfterMs(retry)}
	}
	u, err := s.store.GetUser(ctx, req.UserID)
	if errors.Is(err, ErrNotFound) {
		return wire.AuthResponse{}, bad
	}
	if err != nil {
		return wire.AuthResponse{}, s.internal("password reset", err)
	}
	if u.ResetHash == "" || u.Disabled || !s.cfg.Now().Before(u.ResetExpires) ||
		subtle.ConstantTimeCompare([]byte(u.ResetHash), []byte(HashSecret(req.Code))) != 1 {
		return wire.AuthResponse{}, bad
	}
	hash, err := s.pw.hash(ctx, req.Password)
	if err != nil {
		return wire.AuthResponse{}, err
	}
	none, zero := "", time.Time{}
	if u, err = s.store.UpdateProfile(ctx, u.ID, ProfileChange{PasswordHash: hash, ResetHash: &none, ResetExpires: &zero}); err != nil {
		return wire.AuthResponse{}, s.internal("password reset", err)
	}
	s.log.Info("password reset", "user", u.ID)
	return s.issueToken(ctx, u)
}

// AdminInvites lists the invites not yet used or expired.
func (s *Service) AdminInvites(ctx context.Context, admin string) (wire.InvitesResponse, error) {
	if err := s.requireServerAdmin(ctx, admin); err != nil {
		return wire.InvitesResponse{}, err
	}
	invs, err := s.store.ListInvites(ctx)
	if err != nil {
		return wire.InvitesResponse{}, s.internal("list invites", err)
	}
	out := wire.InvitesResponse{Invites: make([]wire.InviteInfo, len(invs))}
	for i, inv := range invs {
		out.Invites[i] = wire.InviteInfo{ID: inv.Hash, CreatedBy: inv.CreatedBy, ExpiresAt: inv.ExpiresAt.UTC()}
	}
	return out, nil
}

// AdminRevokeInvite makes an invite unusable.
func (s *Service) AdminRevokeInvite(ctx context.Context, admin, id string) error {
	if err := s.requireServerAdmin(ctx, admin); err != nil {
		return err
	}
	if err := s.store.DeleteInvite(ctx, id); err != nil {
		return s.notFoundOr(err, "invite", id)
	}
	s.log.Info("invite revoked", "admin", admin, "invite", id[:min(len(id), 12)])
	return nil
}

// endSessions closes user's connections here and on every other node they
// are connected to, and drops their tokens from every node's cache; with
// deleteTokens it deletes the tokens too (a disabled account's are kept,
// marked, by the caller).
func (s *Service) endSessions(ctx context.Context, user, reason string, deleteTokens bool) error {
	if deleteTokens {
		if err := s.store.DeleteUserTokens(ctx, user); err != nil {
			return s.internal("end sessions", err)
		}
	}
	s.revoke(ctx, Revocation{UserIDs: []string{user}})
	s.hub.CloseUser(user, conn.CloseTokenRevoked, reason)
	nodes, err := s.cfg.Registry.Nodes(ctx, []string{user})
	if err != nil {
		// Their sockets on other nodes end at the next reconnect, refused then.
		s.log.Warn("end sessions: the registry cannot say where the user is connected", "user", user, "err", err)
		return nil
	}
	for _, n := range nodes[user] {
		if n == s.cfg.NodeID {
			continue
		}
		if err := s.cfg.Broker.Publish(ctx, n, Envelope{UserIDs: []string{user}, Close: true}); err != nil {
			s.log.Warn("end sessions on another node", "node", n, "user", user, "err", err)
		}
	}
	return nil
}

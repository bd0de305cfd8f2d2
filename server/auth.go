package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/chatterm/chat/internal/termtext"
	"slices"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// loginsPerSecond bounds password guesses per account (bcrypt is slow too).
const loginsPerSecond = 5

// HashSecret is how tokens and invite codes are stored: by this hash.
func HashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (s *Service) passwordCost() int {
	if s.cfg.PasswordCost != 0 {
		return s.cfg.PasswordCost
	}
	return bcrypt.DefaultCost
}

// validateDisplayName also refuses a name that is another user's id in form
// ("bob" on alice's account): people read names where ids are not shown.
func validateDisplayName(userID, name string) error {
	if err := wire.ValidateName("display_name", name, wire.MaxDisplayNameLen); err != nil {
		return err
	}
	if name != userID && wire.ValidateUserID(name) == nil {
		return wire.Errorf(wire.CodeInvalid, "display_name %q has the form of a user id and could be taken for another user; add a space, or use your own id", name)
	}
	return nil
}

// nameKeys are the confusable keys an account holds (termtext.NameKey): its
// id's and its display name's. The store lets one account hold a key, so no
// one can be named "Alice", "alice " or "аlice" (Cyrillic а) but alice.
func nameKeys(userID, displayName string) []string {
	keys := []string{termtext.NameKey(userID)}
	if k := termtext.NameKey(displayName); k != keys[0] {
		keys = append(keys, k)
	}
	return keys
}

// holdsAll says whether held has every key of want.
func holdsAll(held, want []string) bool {
	for _, k := range want {
		if !slices.Contains(held, k) {
			return false
		}
	}
	return true
}

func confusable(what, v string) error {
	return wire.Errorf(wire.CodeConfusable, "%s %q reads like another user's id or display name (ignoring case, spaces at the ends and look-alike letters); pick another", what, v)
}

// ClaimNameKeys gives every account the keys of its id and display name
// that no other account holds: the accounts made before keys were kept.
// Each node runs it once at start, in the background; two accounts whose
// names were already confusable keep both, the first to claim holding the key.
func (s *Service) ClaimNameKeys(ctx context.Context) error {
	users, err := s.store.ListUsers(ctx)
	if err != nil {
		return fmt.Errorf("list users: %w", err)
	}
	for _, u := range users {
		want := nameKeys(u.ID, u.DisplayName)
		if holdsAll(u.NameKeys, want) {
			continue
		}
		err := s.store.ClaimNameKeys(ctx, u.ID, want)
		if errors.Is(err, ErrConfusable) {
			s.log.Info("an account's name reads like another's; it keeps it", "user", u.ID)
			continue
		}
		if err != nil {
			return fmt.Errorf("claim name keys of %s: %w", u.ID, err)
		}
	}
	return nil
}

// allowAuth counts one login or registration from a client address; past
// Config.AuthRate per second it is refused with a retry hint. Counted before
// any password is hashed, so a spray from one address costs no bcrypt run.
// The per-account limit (loginsPerSecond) still holds for guesses spread over
// many addresses, and the hashing slots bound the CPU either way.
func (s *Service) allowAuth(ctx context.Context, from string) error {
	if s.cfg.AuthRate < 0 || from == "" {
		return nil
	}
	if ok, retry, err := s.cfg.Rate.Allow(ctx, "auth:"+from, s.cfg.AuthRate); err == nil && !ok {
		return &wire.Error{Code: wire.CodeRateLimited, Message: "too many logins or registrations from your address; wait and retry", RetryAfterMs: retryAfterMs(retry)}
	}
	return nil
}

// Register creates an account and logs it in. The first account of an empty server
// is always accepted and becomes admin; after that the registration mode decides.
// from is the client's address, for the per-address limit ("" for none).
func (s *Service) Register(ctx context.Context, req wire.RegisterRequest, from string) (wire.AuthResponse, error) {
	if err := wire.ValidateUserID(req.UserID); err != nil {
		return wire.AuthResponse{}, err
	}
	if n := len(req.Password); n < wire.MinPasswordLen || n > wire.MaxPasswordLen {
		return wire.AuthResponse{}, wire.Errorf(wire.CodeInvalid, "password must be %d to %d bytes long", wire.MinPasswordLen, wire.MaxPasswordLen)
	}
	if req.DisplayName == "" {
		req.DisplayName = req.UserID
	}
	if err := validateDisplayName(req.UserID, req.DisplayName); err != nil {
		return wire.AuthResponse{}, err
	}
	if err := s.allowAuth(ctx, from); err != nil {
		return wire.AuthResponse{}, err
	}
	hash, err := s.pw.hash(ctx, req.Password)
	if err != nil {
		return wire.AuthResponse{}, err
	}
	now := s.cfg.Now()
	u := User{ID: req.UserID, DisplayName: req.DisplayName, PasswordHash: hash, Admin: true, CreatedAt: now,
		NameKeys: nameKeys(req.UserID, req.DisplayName)}
	err = s.store.CreateUser(ctx, u, Claim{First: true, Now: now})
	if errors.Is(err, ErrNotFirst) {
		u.Admin = false
		claim := Claim{Now: now}
		switch {
		case req.InviteCode != "":
			claim.InviteHash = HashSecret(req.InviteCode)
		case s.cfg.Registration == RegistrationOpen:
		case s.cfg.Registration == RegistrationClosed:
			return wire.AuthResponse{}, wire.Errorf(wire.CodeForbidden, "registration is closed on this server; ask an admin for an invite code")
		default:
			return wire.AuthResponse{}, wire.Errorf(wire.CodeForbidden, "this server needs an invite code to register; ask an admin for one")
		}
		err = s.store.CreateUser(ctx, u, claim)
	}
	switch {
	case errors.Is(err, ErrExists):
		return wire.AuthResponse{}, wire.Errorf(wire.CodeConflict, "user_id %q is taken; pick another", req.UserID)
	case errors.Is(err, ErrConfusable):
		return wire.AuthResponse{}, wire.Errorf(wire.CodeConfusable, "user_id %q or display_name %q reads like another user's id or display name (ignoring case, spaces at the ends and look-alike letters); pick another", req.UserID, req.DisplayName)
	case errors.Is(err, ErrBadInvite):
		return wire.AuthResponse{}, wire.Errorf(wire.CodeForbidden, "invite code is unknown, used or expired")
	case err != nil:
		return wire.AuthResponse{}, s.internal("register", err)
	}
	s.log.Info("user registered", "user", u.ID, "admin", u.Admin)
	return s.issueToken(ctx, u)
}

// Login checks a password and issues a token. from is the client's address,
// for the per-address limit ("" for none). An unknown user costs what a wrong
// password costs: the same limits, and a bcrypt comparison against a dummy
// hash, so accounts cannot be told apart by the answer's time.
func (s *Service) Login(ctx context.Context, req wire.LoginRequest, from string) (wire.AuthResponse, error) {
	wrong := wire.Errorf(wire.CodeUnauthorized, "wrong user_id or password")
	if wire.ValidateUserID(req.UserID) != nil || req.Password == "" || len(req.Password) > wire.MaxPasswordLen {
		return wire.AuthResponse{}, wrong
	}
	if err := s.allowAuth(ctx, from); err != nil {
		return wire.AuthResponse{}, err
	}
	if ok, retry, err := s.cfg.Rate.Allow(ctx, "login:"+req.UserID, loginsPerSecond); err == nil && !ok {
		return wire.AuthResponse{}, &wire.Error{Code: wire.CodeRateLimited, Message: "too many login attempts; wait and retry", RetryAfterMs: retryAfterMs(retry)}
	}
	u, err := s.store.GetUser(ctx, req.UserID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return wire.AuthResponse{}, s.internal("login", err)
	}
	ok, err := s.pw.check(ctx, u.PasswordHash, req.Password)
	if err != nil {
		return wire.AuthResponse{}, err
	}
	if !ok {
		return wire.AuthResponse{}, wrong
	}
	if u.Disabled { // said only to whoever knows the password
		return wire.AuthResponse{}, errAccountDisabled
	}
	return s.issueToken(ctx, u)
}

func (s *Service) issueToken(ctx context.Context, u User) (wire.AuthResponse, error) {
	token := rand.Text() + rand.Text() // 52 base32 characters, 260 bits
	t := Token{Hash: HashSecret(token), UserID: u.ID, ExpiresAt: s.cfg.Now().Add(s.cfg.TokenTTL)}
	if err := s.store.PutToken(ctx, t); err != nil {
		return wire.AuthResponse{}, s.internal("store token", err)
	}
	return wire.AuthResponse{UserID: u.ID, Token: token, ExpiresAt: t.ExpiresAt.UTC(), Admin: u.Admin}, nil
}

// errAccountDisabled answers a disabled account's password and tokens: the
// one refusal a client must not meet by asking to log in again.
var errAccountDisabled = wire.Errorf(wire.CodeAccountDisabled, "account disabled: ask your server's admin")

// Authenticate maps a bearer token to its user id.
func (s *Service) Authenticate(ctx context.Context, token string) (string, error) {
	if token == "" {
		return "", wire.Errorf(wire.CodeUnauthorized, "no token: log in and send Authorization: Bearer <token>")
	}
	h := HashSecret(token)
	var mark tokenMark
	if s.tokens != nil {
		if user, ok := s.tokens.get(h, s.cfg.Now()); ok {
			return user, nil
		}
		mark = s.tokens.mark()
	}
	t, err := s.store.GetToken(ctx, h)
	if errors.Is(err, ErrNotFound) {
		return "", wire.Errorf(wire.CodeUnauthorized, "token is unknown or expired: log in again")
	}
	if err != nil {
		if s.tokens != nil && errors.Is(err, ErrUnavailable) {
			// The store is out: the reads the caches can answer go on for
			// every client this node saw before (docs/reliability.md).
			if user, ok := s.tokens.getStale(h, s.cfg.Now()); ok {
				return user, nil
			}
		}
		return "", s.internal("authenticate", err)
	}
	if t.Disabled {
		// Not cached: rare, and an account enabled again drops these tokens.
		return "", errAccountDisabled
	}
	if s.tokens != nil {
		s.tokens.put(mark, h, t, s.cfg.Now())
	}
	return t.UserID, nil
}

// revoke tells every node's token cache of r: this node's at once, whatever
// the broker says, and the others' through it. A node that cannot hear it
// caches nothing (tokens.go); one that can but missed it because this
// publish failed answers the token from its cache for at most
// Config.TokenCacheTTL.
func (s *Service) revoke(ctx context.Context, r Revocation) {
	if s.tokens == nil {
		return
	}
	s.tokens.revoke(r)
	if err := s.cfg.Revocations.Publish(ctx, r); err != nil {
		s.metrics.Fallbacks.WithLabelValues("revocations").Inc()
		s.log.Warn("token revocation not published: other nodes may answer the token from their caches for up to the token cache TTL",
			"users", r.UserIDs, "tokens", len(r.TokenHashes), "err", err)
	}
}

// Logout revokes a token and closes this node's sockets opened with it (code
// 4001: log in again before reconnecting). Every node refuses the token from
// then on (revoke); sockets on other nodes end at their next reconnect.
func (s *Service) Logout(ctx context.Context, userID, token string) error {
	h := HashSecret(token)
	if err := s.store.DeleteToken(ctx, h); err != nil {
		return s.internal("logout", err)
	}
	s.revoke(ctx, Revocation{TokenHashes: []string{h}})
	s.hub.CloseToken(userID, h, conn.CloseTokenRevoked, "logged out")
	return nil
}

// CreateInvite makes a single-use invite code; admins only.
func (s *Service) CreateInvite(ctx context.Context, userID string) (wire.InviteResponse, error) {
	u, err := s.store.GetUser(ctx, userID)
	if err != nil {
		return wire.InviteResponse{}, s.internal("create invite", err)
	}
	if !u.Admin {
		return wire.InviteResponse{}, wire.Errorf(wire.CodeForbidden, "only admins create invite codes")
	}
	code := strings.ToLower(rand.Text()[:16])
	inv := Invite{Hash: HashSecret(code), CreatedBy: userID, ExpiresAt: s.cfg.Now().Add(s.cfg.InviteTTL)}
	if err := s.store.PutInvite(ctx, inv); err != nil {
		return wire.InviteResponse{}, s.internal("create invite", err)
	}
	return wire.InviteResponse{Code: code, ExpiresAt: inv.ExpiresAt.UTC()}, nil
}

// FirstUser returns the account that claimed the server (its first, the
// admin), or ErrNotFound while nobody has registered.
func (s *Service) FirstUser(ctx context.Context) (string, error) { return s.store.FirstUser(ctx) }

// Profile returns a user's public profile through the profile cache; concurrent
// misses for one user share a single store read (request coalescing).
func (s *Service) Profile(ctx context.Context, userID string) (wire.Profile, error) {
	p, err := s.profile(ctx, userID)
	return wireProfile(p), err
}

// Me is the caller's own profile: the public one and the caller's settings.
func (s *Service) Me(ctx context.Context, userID string) (wire.Profile, error) {
	p, err := s.profile(ctx, userID)
	me := wireProfile(p)
	me.HidePresence = p.HidePresence
	return me, err
}

func (s *Service) profile(ctx context.Context, userID string) (Profile, error) {
	if err := wire.ValidateUserID(userID); err != nil {
		return Profile{}, err
	}
	if p, ok, err := s.cfg.Profiles.Get(ctx, userID); err == nil && ok {
		return p, nil
	} else if err != nil {
		s.metrics.Fallbacks.WithLabelValues("profile_cache").Inc()
	}
	v, err, _ := s.loads.Do(userID, func() (any, error) {
		u, err := s.store.GetUser(ctx, userID)
		if err != nil {
			return nil, err
		}
		p := profileOf(u)
		if err := s.cfg.Profiles.Set(ctx, p); err != nil {
			s.log.Debug("profile cache set", "err", err)
		}
		return p, nil
	})
	if errors.Is(err, ErrNotFound) {
		return Profile{}, wire.Errorf(wire.CodeNotFound, "no user %q", userID)
	}
	if err != nil {
		return Profile{}, s.internal("load profile", err)
	}
	return v.(Profile), nil
}

func profileOf(u User) Profile {
	return Profile{UserID: u.ID, DisplayName: u.DisplayName, Status: u.Status, Admin: u.Admin, HidePresence: u.HidePresence}
}

func wireProfile(p Profile) wire.Profile {
	return wire.Profile{UserID: p.UserID, DisplayName: p.DisplayName, Status: p.Status, Admin: p.Admin}
}

// UpdateProfile changes the caller's display name, status or presence
// setting; the cached profile is deleted synchronously.
func (s *Service) UpdateProfile(ctx context.Context, userID string, upd wire.ProfileUpdate) (wire.Profile, error) {
	if err := s.allow(ctx, "profile", userID, s.cfg.Limits.ProfileWrites); err != nil {
		return wire.Profile{}, err
	}
	if upd.DisplayName != nil {
		if *upd.DisplayName == "" {
			return wire.Profile{}, wire.Errorf(wire.CodeInvalid, "display_name must not be empty")
		}
		if err := validateDisplayName(userID, *upd.DisplayName); err != nil {
			return wire.Profile{}, err
		}
	}
	if upd.Status != nil {
		if err := wire.ValidateName("status", *upd.Status, wire.MaxStatusTextLen); err != nil {
			return wire.Profile{}, err
		}
	}
	ch := ProfileChange{DisplayName: upd.DisplayName, Status: upd.Status, HidePresence: upd.HidePresence}
	if upd.DisplayName != nil {
		ch.NameKeys = nameKeys(userID, *upd.DisplayName)
	}
	u, err := s.store.UpdateProfile(ctx, userID, ch)
	if errors.Is(err, ErrConfusable) {
		return wire.Profile{}, confusable("display_name", *upd.DisplayName)
	}
	if err != nil {
		return wire.Profile{}, s.internal("update profile", err)
	}
	if err := s.cfg.Profiles.Delete(ctx, userID); err != nil {
		s.log.Warn("profile cache delete", "user", userID, "err", err)
	}
	if upd.DisplayName != nil || upd.Status != nil {
		s.announceProfile(ctx, wireProfile(profileOf(u))) // profiles.go
	}
	me := wireProfile(profileOf(u))
	me.HidePresence = u.HidePresence
	return me, nil
}

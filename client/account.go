package client

import (
	"context"
	"errors"

	"github.com/chatterm/chat/wire"
)

// Login exchanges a password for a token at server (empty: cfg's server) and
// stores the login in cfg's home, making the server the default.
func Login(ctx context.Context, cfg Config, server, user, password string) (Account, error) {
	return authenticate(ctx, cfg, server, func(api *API) (wire.AuthResponse, error) {
		return api.Login(ctx, wire.LoginRequest{UserID: user, Password: password})
	})
}

// Register creates an account at server (empty: cfg's server) and stores the
// login like Login.
func Register(ctx context.Context, cfg Config, server string, req wire.RegisterRequest) (Account, error) {
	return authenticate(ctx, cfg, server, func(api *API) (wire.AuthResponse, error) {
		return api.Register(ctx, req)
	})
}

func authenticate(ctx context.Context, cfg Config, server string, call func(*API) (wire.AuthResponse, error)) (Account, error) {
	if server != "" {
		cfg.Server = server
	}
	server, err := cfg.ResolveServer()
	if err != nil {
		return Account{}, err
	}
	resp, err := call(NewAPI(server, "", cfg.HTTPClient))
	if err != nil {
		return Account{}, err
	}
	acct := Account{Server: server, UserID: resp.UserID, Token: resp.Token, ExpiresAt: resp.ExpiresAt}
	if err := cfg.SaveAccount(acct); err != nil {
		return Account{}, err
	}
	return acct, nil
}

// Logout revokes the stored login's token on the server and forgets it. A
// token the server no longer accepts counts as revoked; a server that cannot
// be reached keeps the login, so the user can retry.
func Logout(ctx context.Context, cfg Config) error {
	acct, err := cfg.LoadAccount()
	if err != nil {
		return err
	}
	if err := NewAPI(acct.Server, acct.Token, cfg.HTTPClient).Logout(ctx); err != nil && wire.ErrorCode(err) != wire.CodeUnauthorized {
		return err
	}
	return cfg.RemoveAccount(acct.Server)
}

// whyRefused tells a disabled account from a revoked token when the server
// closed the socket with CloseTokenRevoked, which both end in: one request
// asks (a refused dial already says). It returns the account_disabled error,
// or err.
func (s *Session) whyRefused(ctx context.Context, err error) error {
	var ce *CloseError
	if AccountDisabled(err) || !errors.As(err, &ce) {
		return err
	}
	if _, meErr := s.api.Me(ctx); AccountDisabled(meErr) {
		return meErr
	}
	return err
}

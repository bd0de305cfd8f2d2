package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/chatterm/chat/server"
)

func (s *Store) CreateUser(ctx context.Context, u server.User, claim server.Claim) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if claim.First {
			res, err := tx.Exec(`INSERT INTO meta (key, value) VALUES ('first_user', ?) ON CONFLICT DO NOTHING`, u.ID)
			if err != nil {
				return fmt.Errorf("claim first user: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return server.ErrNotFirst
			}
		}
		if claim.InviteHash != "" {
			res, err := tx.Exec(`DELETE FROM invites WHERE hash = ? AND expires_at > ?`, claim.InviteHash, ns(claim.Now))
			if err != nil {
				return fmt.Errorf("use invite: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return server.ErrBadInvite
			}
		}
		_, err := tx.Exec(`INSERT INTO users (user_id, display_name, status, password_hash, admin, hide_presence, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			u.ID, u.DisplayName, u.Status, u.PasswordHash, u.Admin, u.HidePresence, ns(u.CreatedAt))
		if isUnique(err) {
			return server.ErrExists
		}
		if err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		return claimKeys(tx, u.ID, u.NameKeys)
	})
}

// claimKeys gives userID keys, in tx: ErrConfusable when another account
// holds one.
func claimKeys(tx *sql.Tx, userID string, keys []string) error {
	for _, k := range keys {
		if _, err := tx.Exec(`INSERT INTO name_keys (key, user_id) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, k, userID); err != nil {
			return fmt.Errorf("claim name key: %w", err)
		}
		var owner string
		if err := tx.QueryRow(`SELECT user_id FROM name_keys WHERE key = ?`, k).Scan(&owner); err != nil {
			return fmt.Errorf("claim name key: %w", err)
		}
		if owner != userID {
			return server.ErrConfusable
		}
	}
	return nil
}

func (s *Store) ClaimNameKeys(ctx context.Context, userID string, keys []string) error {
	var confusable bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		for _, k := range keys {
			err := claimKeys(tx, userID, []string{k})
			if errors.Is(err, server.ErrConfusable) {
				confusable = true
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && confusable {
		return server.ErrConfusable
	}
	return err
}

func (s *Store) GetUser(ctx context.Context, id string) (server.User, error) {
	return scanUser(s.r.QueryRowContext(ctx, selectUser, id))
}

func (s *Store) FirstUser(ctx context.Context) (string, error) {
	var id string
	err := s.r.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'first_user'`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", server.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("first user: %w", err)
	}
	return id, nil
}

const userColumns = `user_id, display_name, status, password_hash, admin, hide_presence, disabled, reset_hash, reset_expires, created_at`

const selectUser = `SELECT ` + userColumns + ` FROM users WHERE user_id = ?`

func scanUser(row interface{ Scan(...any) error }) (server.User, error) {
	var u server.User
	var created, resetExp int64
	err := row.Scan(&u.ID, &u.DisplayName, &u.Status, &u.PasswordHash, &u.Admin, &u.HidePresence, &u.Disabled, &u.ResetHash, &resetExp, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return u, server.ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("get user: %w", err)
	}
	u.CreatedAt = fromNS(created)
	if resetExp != 0 {
		u.ResetExpires = fromNS(resetExp)
	}
	return u, nil
}

func (s *Store) ListUsers(ctx context.Context) ([]server.User, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+userColumns+` FROM users ORDER BY user_id`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	var out []server.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

func (s *Store) DeleteUserTokens(ctx context.Context, userID string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`DELETE FROM tokens WHERE user_id = ?`, userID); err != nil {
			return fmt.Errorf("delete tokens of %s: %w", userID, err)
		}
		return nil
	})
}

func (s *Store) DisableUserTokens(ctx context.Context, userID string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE tokens SET disabled = 1 WHERE user_id = ?`, userID); err != nil {
			return fmt.Errorf("disable tokens of %s: %w", userID, err)
		}
		return nil
	})
}

func (s *Store) ListInvites(ctx context.Context) ([]server.Invite, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT hash, created_by, expires_at FROM invites WHERE expires_at > ? ORDER BY expires_at DESC`, ns(s.now()))
	if err != nil {
		return nil, fmt.Errorf("list invites: %w", err)
	}
	defer rows.Close()
	var out []server.Invite
	for rows.Next() {
		var inv server.Invite
		var exp int64
		if err := rows.Scan(&inv.Hash, &inv.CreatedBy, &exp); err != nil {
			return nil, fmt.Errorf("list invites: %w", err)
		}
		inv.ExpiresAt = fromNS(exp)
		out = append(out, inv)
	}
	return out, rows.Err()
}

func (s *Store) DeleteInvite(ctx context.Context, hash string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM invites WHERE hash = ?`, hash)
		if err != nil {
			return fmt.Errorf("delete invite: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return server.ErrNotFound
		}
		return nil
	})
}

func (s *Store) UpdateProfile(ctx context.Context, id string, ch server.ProfileChange) (server.User, error) {
	var u server.User
	err := s.write(ctx, func(tx *sql.Tx) error {
		var resetExp *int64
		if ch.ResetExpires != nil {
			n := ns(*ch.ResetExpires)
			resetExp = &n
		}
		res, err := tx.Exec(`UPDATE users SET display_name = COALESCE(?, display_name), status = COALESCE(?, status),
			hide_presence = COALESCE(?, hide_presence), admin = COALESCE(?, admin), disabled = COALESCE(?, disabled),
			password_hash = COALESCE(?, password_hash), reset_hash = COALESCE(?, reset_hash),
			reset_expires = COALESCE(?, reset_expires) WHERE user_id = ?`,
			ch.DisplayName, ch.Status, ch.HidePresence, ch.Admin, ch.Disabled, ch.PasswordHash, ch.ResetHash, resetExp, id)
		if err != nil {
			return fmt.Errorf("update profile: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return server.ErrNotFound
		}
		if ch.NameKeys != nil {
			if _, err := tx.Exec(`DELETE FROM name_keys WHERE user_id = ?`, id); err != nil {
				return fmt.Errorf("update profile: %w", err)
			}
			if err := claimKeys(tx, id, ch.NameKeys); err != nil {
				return err
			}
		}
		u, err = scanUser(tx.QueryRow(selectUser, id))
		return err
	})
	return u, err
}

func (s *Store) PutInvite(ctx context.Context, inv server.Invite) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO invites (hash, created_by, expires_at) VALUES (?, ?, ?)`, inv.Hash, inv.CreatedBy, ns(inv.ExpiresAt))
		if err != nil {
			return fmt.Errorf("put invite: %w", err)
		}
		return nil
	})
}

func (s *Store) PutToken(ctx context.Context, t server.Token) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO tokens (hash, user_id, expires_at) VALUES (?, ?, ?)`, t.Hash, t.UserID, ns(t.ExpiresAt))
		if err != nil {
			return fmt.Errorf("put token: %w", err)
		}
		// Expired tokens are swept here, on a write path that already holds the lock,
		// instead of by a scanning background job.
		_, err = tx.Exec(`DELETE FROM tokens WHERE user_id = ? AND expires_at <= ?`, t.UserID, ns(s.now()))
		return err
	})
}

func (s *Store) GetToken(ctx context.Context, hash string) (server.Token, error) {
	t := server.Token{Hash: hash}
	var exp int64
	err := s.r.QueryRowContext(ctx, `SELECT user_id, expires_at, disabled FROM tokens WHERE hash = ?`, hash).Scan(&t.UserID, &exp, &t.Disabled)
	if errors.Is(err, sql.ErrNoRows) {
		return t, server.ErrNotFound
	}
	if err != nil {
		return t, fmt.Errorf("get token: %w", err)
	}
	t.ExpiresAt = fromNS(exp)
	if !t.ExpiresAt.After(s.now()) {
		return t, server.ErrNotFound
	}
	return t, nil
}

func (s *Store) DeleteToken(ctx context.Context, hash string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`DELETE FROM tokens WHERE hash = ?`, hash)
		return err
	})
}

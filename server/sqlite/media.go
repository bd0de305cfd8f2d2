package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/chatterm/chat/server"
)

// carrierKey names the message that carries an upload.
func carrierKey(convID, messageID string) string { return convID + "/" + messageID }

func (s *Store) LinkMedia(ctx context.Context, mediaID, convID, messageID string) (int64, error) {
	var links int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE media_uploads SET state = 'sent', links = links + 1
			WHERE media_id = ? AND state != 'expiring' RETURNING links`, mediaID).Scan(&links)
		switch {
		case err == nil:
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO media_carriers (media_id, carrier) VALUES (?, ?)`,
				mediaID, carrierKey(convID, messageID)); err != nil {
				return fmt.Errorf("link media: %w", err)
			}
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("link media: %w", err)
		default:
			// No record to mark: media sent before uploads were recorded
			// may be sent again; an expiring upload (its message deleted, or
			// never sent in time) or an unknown one may not.
			links = 0
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM media_uploads WHERE media_id = ?`, mediaID).Scan(&one)
			if err == nil {
				return fmt.Errorf("link media %s: expiring: %w", mediaID, server.ErrNotFound)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("link media: %w", err)
			}
			err = tx.QueryRowContext(ctx, `SELECT 1 FROM media_links WHERE media_id = ? LIMIT 1`, mediaID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("link media %s: %w", mediaID, server.ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("link media: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO media_links (media_id, conversation_id) VALUES (?, ?)`, mediaID, convID); err != nil {
			return fmt.Errorf("link media: %w", err)
		}
		return nil
	})
	return links, err
}

func (s *Store) UnlinkMedia(ctx context.Context, mediaID, convID, messageID string, links int64, at time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		var now int64
		var state string
		err := tx.QueryRowContext(ctx, `SELECT links, state FROM media_uploads WHERE media_id = ?`, mediaID).Scan(&now, &state)
		if errors.Is(err, sql.ErrNoRows) {
			return server.ErrNotApplied
		}
		if err != nil {
			return fmt.Errorf("unlink media: %w", err)
		}
		if now != links || state != "sent" {
			return server.ErrNotApplied // linked again since, or released
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM media_carriers WHERE media_id = ? AND carrier = ?`, mediaID, carrierKey(convID, messageID)); err != nil {
			return fmt.Errorf("unlink media: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE media_uploads SET state = 'unsent', created_at = ? WHERE media_id = ?
			AND NOT EXISTS (SELECT 1 FROM media_carriers WHERE media_id = ?)`, ns(at), mediaID, mediaID); err != nil {
			return fmt.Errorf("unlink media: %w", err)
		}
		return nil
	})
}

func (s *Store) MediaConversations(ctx context.Context, mediaID string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT conversation_id FROM media_links WHERE media_id = ? ORDER BY conversation_id`, mediaID)
	if err != nil {
		return nil, fmt.Errorf("media conversations: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("media conversations: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (s *Store) MediaUsage(ctx context.Context, userID string) (server.MediaUsage, error) {
	var u server.MediaUsage
	var at int64
	err := s.r.QueryRowContext(ctx, `SELECT bytes, uploads, rate_at, version FROM media_usage WHERE user_id = ?`, userID).
		Scan(&u.Bytes, &u.Uploads, &at, &u.Version)
	if errors.Is(err, sql.ErrNoRows) {
		return server.MediaUsage{}, nil
	}
	if err != nil {
		return server.MediaUsage{}, fmt.Errorf("media usage: %w", err)
	}
	if at != 0 {
		u.RateAt = fromNS(at)
	}
	return u, nil
}

func (s *Store) ReserveMedia(ctx context.Context, up server.MediaUpload, was, next server.MediaUsage) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		var version int64
		err := tx.QueryRowContext(ctx, `SELECT version FROM media_usage WHERE user_id = ?`, up.Owner).Scan(&version)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("reserve media: %w", err)
		}
		if version != was.Version {
			return server.ErrRaced
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO media_uploads (media_id, owner, size, created_at) VALUES (?, ?, ?, ?)`,
			up.MediaID, up.Owner, up.Size, ns(up.CreatedAt))
		if isUnique(err) {
			return server.ErrExists
		}
		if err != nil {
			return fmt.Errorf("reserve media: %w", err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO media_usage (user_id, bytes, uploads, rate_at, version) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (user_id) DO UPDATE SET bytes = excluded.bytes, uploads = excluded.uploads, rate_at = excluded.rate_at, version = excluded.version`,
			up.Owner, next.Bytes, next.Uploads, nsOrZero(next.RateAt), next.Version)
		if err != nil {
			return fmt.Errorf("reserve media: %w", err)
		}
		return nil
	})
}

func nsOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return ns(t)
}

// UnsentMedia reads the partial index of uploads not sent.
func (s *Store) UnsentMedia(ctx context.Context, before time.Time, limit int) ([]server.MediaUpload, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT media_id, owner, size, created_at FROM media_uploads
		WHERE state != 'sent' AND created_at < ? ORDER BY created_at LIMIT ?`, ns(before), limit)
	if err != nil {
		return nil, fmt.Errorf("unsent media: %w", err)
	}
	defer rows.Close()
	var out []server.MediaUpload
	for rows.Next() {
		var up server.MediaUpload
		var at int64
		if err := rows.Scan(&up.MediaID, &up.Owner, &up.Size, &at); err != nil {
			return nil, fmt.Errorf("unsent media: %w", err)
		}
		up.CreatedAt = fromNS(at)
		out = append(out, up)
	}
	return out, rows.Err()
}

func (s *Store) ExpireMedia(ctx context.Context, mediaID string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		var state string
		err := tx.QueryRowContext(ctx, `SELECT state FROM media_uploads WHERE media_id = ?`, mediaID).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return server.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("expire media: %w", err)
		}
		if state == "sent" {
			return server.ErrNotApplied
		}
		if _, err := tx.ExecContext(ctx, `UPDATE media_uploads SET state = 'expiring' WHERE media_id = ?`, mediaID); err != nil {
			return fmt.Errorf("expire media: %w", err)
		}
		return nil
	})
}

func (s *Store) ReleaseMedia(ctx context.Context, mediaID, convID, messageID string) (server.MediaUpload, error) {
	up := server.MediaUpload{MediaID: mediaID}
	carried := false // another message still carries it: the carrier's removal stands, the upload stays
	err := s.write(ctx, func(tx *sql.Tx) error {
		carried = false
		var state string
		var at int64
		err := tx.QueryRowContext(ctx, `SELECT owner, size, created_at, state FROM media_uploads WHERE media_id = ?`, mediaID).
			Scan(&up.Owner, &up.Size, &at, &state)
		if errors.Is(err, sql.ErrNoRows) {
			return server.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("release media: %w", err)
		}
		up.CreatedAt = fromNS(at)
		switch state {
		case "expiring":
			return nil
		case "sent":
		default:
			return server.ErrNotApplied
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM media_carriers WHERE media_id = ? AND carrier = ?`, mediaID, carrierKey(convID, messageID)); err != nil {
			return fmt.Errorf("release media: %w", err)
		}
		var one int
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM media_carriers WHERE media_id = ? LIMIT 1`, mediaID).Scan(&one)
		if err == nil {
			carried = true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("release media: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE media_uploads SET state = 'expiring' WHERE media_id = ?`, mediaID); err != nil {
			return fmt.Errorf("release media: %w", err)
		}
		return nil
	})
	if err == nil && carried {
		err = server.ErrNotApplied
	}
	if err != nil {
		return server.MediaUpload{}, err
	}
	return up, nil
}

func (s *Store) DropMedia(ctx context.Context, up server.MediaUpload) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		var size int64
		var owner string
		if _, err := tx.ExecContext(ctx, `DELETE FROM media_links WHERE media_id = ? AND EXISTS
			(SELECT 1 FROM media_uploads WHERE media_id = ? AND state = 'expiring')`, up.MediaID, up.MediaID); err != nil {
			return fmt.Errorf("drop media links: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM media_carriers WHERE media_id = ? AND EXISTS
			(SELECT 1 FROM media_uploads WHERE media_id = ? AND state = 'expiring')`, up.MediaID, up.MediaID); err != nil {
			return fmt.Errorf("drop media carriers: %w", err)
		}
		err := tx.QueryRowContext(ctx, `DELETE FROM media_uploads WHERE media_id = ? AND state = 'expiring' RETURNING size, owner`, up.MediaID).Scan(&size, &owner)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // dropped already (or not expiring: then it is not ours to drop)
		}
		if err != nil {
			return fmt.Errorf("drop media: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE media_usage SET bytes = bytes - ?, uploads = uploads - 1, version = version + 1 WHERE user_id = ?`, size, owner); err != nil {
			return fmt.Errorf("drop media: %w", err)
		}
		return nil
	})
}

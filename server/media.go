package server

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"time"

	"github.com/chatterm/chat/wire"
)

// Media URLs are short-lived: a client asks again when it needs one.
const (
	uploadURLTTL   = 15 * time.Minute
	downloadURLTTL = time.Hour
)

// Per-user limits on media and group requests, per second (docs/security.md):
// each costs a presign or a store write, and none is needed in bursts.
const (
	mediaPerSecond  = 10
	groupsPerSecond = 2
)

// allowUser counts one request of kind for userID against limit per second;
// the limiter fails open, as for sends. SendRate < 0 turns these limits off
// with the send limit (tests and benchmarks).
func (s *Service) allowUser(ctx context.Context, kind, userID string, limit int) error {
	if s.cfg.SendRate < 0 {
		return nil
	}
	ok, retry, err := s.cfg.Rate.Allow(ctx, kind+":"+userID, limit)
	if err != nil {
		s.metrics.Fallbacks.WithLabelValues("rate_limit").Inc()
		return nil
	}
	if !ok {
		return &wire.Error{Code: wire.CodeRateLimited, Message: "too many " + kind + " requests; retry after the hint", RetryAfterMs: retryAfterMs(retry)}
	}
	return nil
}

// CreateMedia reserves a media_id for the user and returns a presigned URL to
// upload the file to (media by presigned URL, never through the app
// server).
func (s *Service) CreateMedia(ctx context.Context, userID string, req wire.MediaRequest) (wire.MediaResponse, error) {
	if s.cfg.Blobs == nil {
		return wire.MediaResponse{}, wire.Errorf(wire.CodeUnavailable, "this server has no media storage")
	}
	if _, _, err := mime.ParseMediaType(req.ContentType); err != nil || len(req.ContentType) > 100 {
		return wire.MediaResponse{}, wire.Errorf(wire.CodeInvalid, "content_type %q is not a media type like image/png", req.ContentType)
	}
	if req.Size < 1 {
		return wire.MediaResponse{}, wire.Errorf(wire.CodeInvalid, "size must be the file's length in bytes (1 or more)")
	}
	if req.Size > s.cfg.MaxMediaBytes {
		return wire.MediaResponse{}, wire.Errorf(wire.CodeTooLarge, "the file is %s; the largest upload is %s", wire.SizeLabel(req.Size), wire.SizeLabel(s.cfg.MaxMediaBytes))
	}
	if err := s.allowUser(ctx, "media", userID, mediaPerSecond); err != nil {
		return wire.MediaResponse{}, err
	}
	id := wire.NewMediaID(userID)
	// The URL is signed before the reservation, so a failed presign costs
	// the user nothing; a URL whose reservation then fails is never handed out.
	url, err := s.cfg.Blobs.PresignPut(ctx, id, req.ContentType, req.Size, uploadURLTTL)
	if err != nil {
		return wire.MediaResponse{}, s.internal("presign upload", err)
	}
	if err := s.reserveMedia(ctx, MediaUpload{MediaID: id, Owner: userID, Size: req.Size}); err != nil {
		return wire.MediaResponse{}, err
	}
	return wire.MediaResponse{MediaID: id, UploadURL: url, ExpiresAt: s.cfg.Now().Add(uploadURLTTL).UTC()}, nil
}

// mediaBurst is how far ahead of now the byte-rate limiter may run: two of
// the largest files at once, then MediaRate.
func (s *Service) mediaBurst() int64 { return 2 * s.cfg.MaxMediaBytes }

// reserveMedia records up against its owner's quota and byte rate in one
// conditional write of the usage, read again and retried when another
// reservation or the sweep changed it in between. The byte rate is a
// generic cell rate algorithm on the usage record (RateAt), so it holds
// across nodes and restarts with no rate-limiter role, and an upload is
// counted whole before its URL exists.
func (s *Service) reserveMedia(ctx context.Context, up MediaUpload) error {
	for try := 0; ; try++ {
		was, err := s.store.MediaUsage(ctx, up.Owner)
		if err != nil {
			return s.internal("media usage", err)
		}
		now := s.cfg.Now()
		next := was
		next.Bytes += up.Size
		next.Uploads++
		next.Version++
		if q := s.cfg.MediaQuota; q >= 0 && next.Bytes > q {
			return wire.Errorf(wire.CodeQuota, "this upload of %s would take your media to %s of your %s quota; uploads no message carries are deleted after %v (GET /v1/media/usage)",
				wire.SizeLabel(up.Size), wire.SizeLabel(next.Bytes), wire.SizeLabel(q), s.cfg.MediaUnsentTTL)
		}
		if r := s.cfg.MediaRate; r > 0 {
			at := now
			if was.RateAt.After(now) {
				at = was.RateAt
			}
			at = at.Add(bytesTime(up.Size, r))
			if ahead := at.Sub(now) - bytesTime(s.mediaBurst(), r); ahead > 0 {
				return &wire.Error{Code: wire.CodeRateLimited, RetryAfterMs: retryAfterMs(ahead),
					Message: fmt.Sprintf("uploading faster than %s a second; retry after the hint", wire.SizeLabel(r))}
			}
			next.RateAt = at
		}
		up.CreatedAt = now
		err = s.store.ReserveMedia(ctx, up, was, next)
		if errors.Is(err, ErrRaced) && try < 8 {
			continue
		}
		if err != nil {
			return s.internal("reserve media", err)
		}
		return nil
	}
}

// bytesTime is how long n bytes take at rate bytes a second.
func bytesTime(n, rate int64) time.Duration {
	return time.Duration(float64(n) / float64(rate) * float64(time.Second))
}

// MediaUsage shows a user's media usage and limits: their own, or, to a
// server admin, anyone's.
func (s *Service) MediaUsage(ctx context.Context, userID, of string) (wire.MediaUsage, error) {
	if of == "" {
		of = userID
	}
	if of != userID {
		if err := s.requireServerAdmin(ctx, userID); err != nil {
			return wire.MediaUsage{}, err
		}
		if _, err := s.store.GetUser(ctx, of); err != nil {
			return wire.MediaUsage{}, s.notFoundOr(err, "user", of)
		}
	}
	u, err := s.store.MediaUsage(ctx, of)
	if err != nil {
		return wire.MediaUsage{}, s.internal("media usage", err)
	}
	out := wire.MediaUsage{UserID: of, Bytes: u.Bytes, Uploads: u.Uploads, QuotaBytes: s.cfg.MediaQuota,
		RateBytesPerSecond: s.cfg.MediaRate, BurstBytes: s.mediaBurst(), MaxFileBytes: s.cfg.MaxMediaBytes,
		UnsentTTLSeconds: int64(s.cfg.MediaUnsentTTL / time.Second)}
	if out.QuotaBytes < 0 {
		out.QuotaBytes = -1
	}
	if out.RateBytesPerSecond < 0 {
		out.RateBytesPerSecond, out.BurstBytes = -1, -1
	}
	return out, nil
}

// mediaSweepBatch bounds one read of unsent uploads.
const mediaSweepBatch = 100

// SweepMediaOnce deletes uploads no message carried within MediaUnsentTTL:
// each is marked expiring first (a send racing the sweep then either links
// it before, and the sweep leaves it, or is refused after), its blob
// deleted, then its record, giving its bytes back to the quota. A pass cut
// short leaves records expiring, which the next pass finishes. It returns
// how many it deleted.
func (s *Service) SweepMediaOnce(ctx context.Context) (int, error) {
	if s.cfg.Blobs == nil {
		return 0, nil
	}
	ups, err := s.store.UnsentMedia(ctx, s.cfg.Now().Add(-s.cfg.MediaUnsentTTL), mediaSweepBatch)
	if err != nil {
		return 0, fmt.Errorf("unsent media: %w", err)
	}
	n := 0
	for _, up := range ups {
		switch err := s.store.ExpireMedia(ctx, up.MediaID); {
		case errors.Is(err, ErrNotApplied), errors.Is(err, ErrNotFound):
			continue // sent meanwhile, or dropped by another node
		case err != nil:
			return n, fmt.Errorf("expire media %s: %w", up.MediaID, err)
		}
		if err := s.cfg.Blobs.Delete(ctx, up.MediaID); err != nil {
			return n, fmt.Errorf("delete media %s: %w", up.MediaID, err)
		}
		if err := s.store.DropMedia(ctx, up); err != nil {
			return n, fmt.Errorf("drop media %s: %w", up.MediaID, err)
		}
		n++
	}
	if n > 0 {
		s.log.Info("unsent uploads deleted", "count", n)
	}
	return n, nil
}

// MediaUnsentTTL is how long an upload waits for its message (the
// configured grace period, after its default and floor).
func (s *Service) MediaUnsentTTL() time.Duration { return s.cfg.MediaUnsentTTL }

// RunMediaSweeper runs SweepMediaOnce every interval until ctx ends, and
// again at once while a pass filled its batch.
func (s *Service) RunMediaSweeper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			n, err := s.SweepMediaOnce(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				s.log.Warn("media sweep", "err", err)
			}
			if n < mediaSweepBatch || err != nil {
				break
			}
		}
	}
}

// releaseAttachment deletes the media of a message just deleted, when that
// message was its only carrier, and gives its bytes back to the uploader's
// quota. The delete stands whatever happens here: a failure leaves the upload
// expiring, which the unsent sweep finishes (it lists expiring uploads).
func (s *Service) releaseAttachment(ctx context.Context, m Message) {
	if s.cfg.Blobs == nil {
		return
	}
	up, err := s.store.ReleaseMedia(ctx, m.Attachment, m.ConversationID, m.MessageID)
	switch {
	case errors.Is(err, ErrNotApplied), errors.Is(err, ErrNotFound):
		return // another message carries it too, or it predates upload records
	case err != nil:
		s.log.Warn("a deleted message's media was not released; the media sweep will", "media", m.Attachment, "err", err)
		return
	}
	if err := s.cfg.Blobs.Delete(ctx, up.MediaID); err != nil {
		s.log.Warn("a deleted message's media was not deleted; the media sweep will", "media", up.MediaID, "err", err)
		return
	}
	if err := s.store.DropMedia(ctx, up); err != nil {
		s.log.Warn("a deleted message's media record was not dropped; the media sweep will", "media", up.MediaID, "err", err)
	}
}

// MediaURL returns a presigned download URL for a media_id, to its uploader
// and to the members of a conversation it was sent in; to anyone else it does
// not exist (not_found, as for an unknown id).
func (s *Service) MediaURL(ctx context.Context, userID, mediaID string) (string, error) {
	if err := wire.ValidateMediaID(mediaID); err != nil {
		return "", err
	}
	if s.cfg.Blobs == nil {
		return "", wire.Errorf(wire.CodeUnavailable, "this server has no media storage")
	}
	if err := s.allowUser(ctx, "media", userID, mediaPerSecond); err != nil {
		return "", err
	}
	if ok, err := s.maySeeMedia(ctx, userID, mediaID); err != nil {
		return "", err
	} else if !ok {
		return "", wire.Errorf(wire.CodeNotFound, "no media %s in a conversation of yours", mediaID)
	}
	url, err := s.cfg.Blobs.PresignGet(ctx, mediaID, downloadURLTTL)
	if err != nil {
		return "", s.internal("presign download", err)
	}
	return url, nil
}

func (s *Service) maySeeMedia(ctx context.Context, userID, mediaID string) (bool, error) {
	if wire.MediaOwner(mediaID) == userID {
		return true, nil
	}
	convs, err := s.store.MediaConversations(ctx, mediaID)
	if err != nil {
		return false, s.internal("media conversations", err)
	}
	for _, c := range convs {
		_, err := s.store.GetParticipant(ctx, c, userID)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return false, s.internal("check membership", err)
		}
	}
	return false, nil
}

// linkAttachments records the conversation each attachment of reqs (the
// indexes in valid) is sent in, before the messages are stored: a message
// whose attachment could not be linked is refused, so every stored
// attachment can be fetched by the members who see it. It returns the
// indexes still valid, and the link count of each attachment it linked
// (by index), for unlinkFailed.
func (s *Service) linkAttachments(ctx context.Context, convID string, reqs []wire.SendRequest, valid []int, out []SendResult) (kept []int, linked map[int]int64) {
	type result struct {
		links int64
		err   error
	}
	done := map[string]result{}
	kept = valid[:0:0]
	for _, k := range valid {
		a := reqs[k].Attachment
		if a == "" {
			kept = append(kept, k)
			continue
		}
		// Keyed by message too: two messages of a batch carrying one upload
		// are both its carriers.
		key := a + "\x00" + reqs[k].MessageID
		r, ok := done[key]
		if !ok {
			r.links, r.err = s.store.LinkMedia(ctx, a, convID, reqs[k].MessageID)
			done[key] = r
		}
		if errors.Is(r.err, ErrNotFound) {
			out[k].Err = wire.Errorf(wire.CodeNotFound, "attachment %s is not an upload of yours that is still kept (uploads no message carries are deleted after %v); upload it again", a, s.cfg.MediaUnsentTTL)
			continue
		}
		if r.links > 0 { // linked, even if the link's second write failed
			if linked == nil {
				linked = map[int]int64{}
			}
			linked[k] = r.links
		}
		if r.err != nil {
			out[k].Err = s.internal("link attachment", r.err)
			continue
		}
		kept = append(kept, k)
	}
	return kept, linked
}

// unlinkFailed undoes the links of the sends in linked that were not
// stored: their answer is an error other than maybe_stored (which may have
// been stored; its upload stays sent, as for a stored message). The upload
// is then unsent again from now: `chat send` and the TUI's outbox resend a
// failed message with the same message_id and attachment, which links it
// again within the grace period (MediaUnsentTTL); if none comes, the sweep
// deletes it and gives its bytes back. Left linked, an upload whose only
// message was never stored was counted against its owner for good.
func (s *Service) unlinkFailed(ctx context.Context, convID string, reqs []wire.SendRequest, linked map[int]int64, out []SendResult) {
	if len(linked) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for k, links := range linked {
		if out[k].Err == nil || isMaybeStored(out[k].Err) {
			continue
		}
		err := s.store.UnlinkMedia(ctx, reqs[k].Attachment, convID, reqs[k].MessageID, links, s.cfg.Now())
		if err != nil && !errors.Is(err, ErrNotApplied) {
			s.log.Warn("a failed send's upload stays linked: it counts against its owner until a message carrying it is deleted",
				"media", reqs[k].Attachment, "conversation", convID, "message_id", reqs[k].MessageID, "err", err)
		}
	}
}

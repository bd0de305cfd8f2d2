package server

import (
	"context"
	"mime"
	"time"

	"errors"
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
		return &wire.Error{Code: wire.CodeRateLimited, Message: "too many " + kind + " requests; retry after the hint", RetryAfterMs: max(retry.Milliseconds(), 1)}
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
	if err := s.allowUser(ctx, "media", userID, mediaPerSecond); err != nil {
		return wire.MediaResponse{}, err
	}
	id := wire.NewMediaID(userID)
	url, err := s.cfg.Blobs.PresignPut(ctx, id, req.ContentType, uploadURLTTL)
	if err != nil {
		return wire.MediaResponse{}, s.internal("presign upload", err)
	}
	return wire.MediaResponse{MediaID: id, UploadURL: url, ExpiresAt: s.cfg.Now().Add(uploadURLTTL).UTC()}, nil
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
// attachment can be fetched by the members who see it.
func (s *Service) linkAttachments(ctx context.Context, convID string, reqs []wire.SendRequest, valid []int, out []SendResult) []int {
	linked := map[string]error{}
	kept := valid[:0:0]
	for _, k := range valid {
		a := reqs[k].Attachment
		if a == "" {
			kept = append(kept, k)
			continue
		}
		err, done := linked[a]
		if !done {
			err = s.store.LinkMedia(ctx, a, convID)
			linked[a] = err
		}
		if err != nil {
			out[k].Err = s.internal("link attachment", err)
			continue
		}
		kept = append(kept, k)
	}
	return kept
}

package server

import (
	"context"
	"mime"
	"time"

	"github.com/chatterm/chat/wire"
)

// Media URLs are short-lived: a client asks again when it needs one.
const (
	uploadURLTTL   = 15 * time.Minute
	downloadURLTTL = time.Hour
)

// CreateMedia reserves a media_id for the user and returns a presigned URL to
// upload the file to (seed 003: media by presigned URL, never through the app
// server).
func (s *Service) CreateMedia(ctx context.Context, userID string, req wire.MediaRequest) (wire.MediaResponse, error) {
	if s.cfg.Blobs == nil {
		return wire.MediaResponse{}, wire.Errorf(wire.CodeUnavailable, "this server has no media storage")
	}
	if _, _, err := mime.ParseMediaType(req.ContentType); err != nil || len(req.ContentType) > 100 {
		return wire.MediaResponse{}, wire.Errorf(wire.CodeInvalid, "content_type %q is not a media type like image/png", req.ContentType)
	}
	id := wire.NewMediaID(userID)
	url, err := s.cfg.Blobs.PresignPut(ctx, id, req.ContentType, uploadURLTTL)
	if err != nil {
		return wire.MediaResponse{}, s.internal("presign upload", err)
	}
	return wire.MediaResponse{MediaID: id, UploadURL: url, ExpiresAt: s.cfg.Now().Add(uploadURLTTL).UTC()}, nil
}

// MediaURL returns a presigned download URL for a media_id. Any logged-in user
// may ask: ids are unguessable and travel only inside conversations.
func (s *Service) MediaURL(ctx context.Context, mediaID string) (string, error) {
	if err := wire.ValidateMediaID(mediaID); err != nil {
		return "", err
	}
	if s.cfg.Blobs == nil {
		return "", wire.Errorf(wire.CodeUnavailable, "this server has no media storage")
	}
	url, err := s.cfg.Blobs.PresignGet(ctx, mediaID, downloadURLTTL)
	if err != nil {
		return "", s.internal("presign download", err)
	}
	return url, nil
}

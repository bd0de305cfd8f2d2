package client

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

// UploadFile uploads an open regular file as an attachment and describes it
// for the message that carries it: its base name, its type (by extension, else
// by its first bytes), its size.
func (a *API) UploadFile(ctx context.Context, f *os.File) (string, wire.AttachmentInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", wire.AttachmentInfo{}, err
	}
	if !fi.Mode().IsRegular() {
		return "", wire.AttachmentInfo{}, fmt.Errorf("%s is not a regular file", f.Name())
	}
	typ := mime.TypeByExtension(filepath.Ext(f.Name()))
	if typ == "" {
		head := make([]byte, 512)
		n, _ := io.ReadFull(f, head)
		typ = http.DetectContentType(head[:n])
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return "", wire.AttachmentInfo{}, err
		}
	}
	// The type shown is the media type alone: "text/plain", not its charset.
	shown, _, _ := strings.Cut(typ, ";")
	info := wire.AttachmentInfo{Name: attachmentName(f.Name()), Type: strings.TrimSpace(shown), Size: fi.Size()}
	if len(info.Type) > wire.MaxAttachmentType || info.Validate() != nil {
		info.Type = "application/octet-stream"
	}
	id, err := a.UploadMedia(ctx, typ, f, fi.Size())
	if err != nil {
		return "", wire.AttachmentInfo{}, fmt.Errorf("upload %s: %w", filepath.Base(f.Name()), err)
	}
	return id, info, nil
}

// attachmentName is a file's base name as AttachmentInfo allows it, and as
// it is safe to save under: termtext.FileName (no bidi or zero-width
// characters, no separators, no leading dot or dash), cut to the limit.
func attachmentName(path string) string {
	name := termtext.FileName(filepath.Base(path))
	for len(name) > wire.MaxAttachmentName {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

// DownloadMedia writes an attachment's bytes to w: its short-lived URL from
// the server, then the file from wherever that points (the server's own file
// store, or S3), with this API's HTTP client and so its TLS settings.
func (a *API) DownloadMedia(ctx context.Context, mediaID string, w io.Writer) error {
	url, err := a.MediaURL(ctx, mediaID)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return fmt.Errorf("download %s: %w", mediaID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download %s: the storage answered %s", mediaID, resp.Status)
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("download %s: %w", mediaID, err)
	}
	return nil
}

// SaveMedia downloads an attachment into dir under name (its sender's file
// name, or the media id's last part), never over an existing file: "a.pdf"
// becomes "a (1).pdf" and so on. It returns the path written.
func (a *API) SaveMedia(ctx context.Context, mediaID, dir, name string) (string, error) {
	// The name comes from the sender: cleaned again here, whatever the
	// server let through, before it names a file on this disk.
	if name == "" {
		name = filepath.Base(mediaID)
	}
	name = termtext.FileName(name)
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	var f *os.File
	var path string
	for i := 0; ; i++ {
		path = filepath.Join(dir, name)
		if i > 0 {
			path = filepath.Join(dir, fmt.Sprintf("%s (%d)%s", stem, i, ext))
		}
		var err error
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !os.IsExist(err) || i == 999 {
			return "", fmt.Errorf("save %s: %w", mediaID, err)
		}
	}
	err := a.DownloadMedia(ctx, mediaID, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

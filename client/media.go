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
	"unicode"

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

// attachmentName is a file's base name as AttachmentInfo allows it: control
// characters dropped, cut to the limit on a character boundary.
func attachmentName(path string) string {
	name := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\\' {
			return -1
		}
		return r
	}, filepath.Base(path))
	for len(name) > wire.MaxAttachmentName {
		_, size := lastRune(name)
		name = name[:len(name)-size]
	}
	return name
}

func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]&0xC0 != 0x80 {
			return rune(s[i]), len(s) - i
		}
	}
	return 0, 1
}

package wire

import (
	"fmt"
	"github.com/chatterm/chat/internal/termtext"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of AttachmentInfo.
const (
	MaxAttachmentName = 255
	MaxAttachmentType = 127
)

// Validate checks an attachment's description: a base name (no path, no
// control characters), a media type of the usual shape, a size not negative.
func (a AttachmentInfo) Validate() error {
	if len(a.Name) > MaxAttachmentName || !utf8.ValidString(a.Name) || strings.ContainsAny(a.Name, `/\`) ||
		strings.IndexFunc(a.Name, unicode.IsControl) >= 0 {
		return Errorf(CodeInvalid, "attachment_info.name must be a file's base name (at most %d bytes, no slashes or control characters)", MaxAttachmentName)
	}
	// A name is saved to disk by the receivers: it must read as what it is
	// (no bidi or zero-width characters) and be safe as a file name (no
	// leading dot or dash). Clients send termtext.FileName of the base name.
	if clean := termtext.FileName(a.Name); a.Name != "" && clean != a.Name {
		return Errorf(CodeInvalid, "attachment_info.name %q must be a plain file name, without bidi or zero-width characters, separators or a leading dot or dash: %q would do", truncate(a.Name, 80), clean)
	}
	if len(a.Type) > MaxAttachmentType || strings.IndexFunc(a.Type, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 ||
		a.Type != "" && !strings.Contains(a.Type, "/") {
		return Errorf(CodeInvalid, "attachment_info.type must be a media type such as application/pdf")
	}
	if a.Size < 0 {
		return Errorf(CodeInvalid, "attachment_info.size must not be negative")
	}
	return nil
}

// SizeLabel is a size as people read it: 812 B, 4.1 KB, 12 MB.
func SizeLabel(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	v, units := float64(n), []string{"KB", "MB", "GB", "TB", "PB", "EB"}
	i := -1
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, units[i])
	}
	return fmt.Sprintf("%.0f %s", v, units[i])
}

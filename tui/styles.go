package tui

import (
	"hash/fnv"
	"image/color"

	"charm.land/bubbles/v2/textinput"

	"charm.land/lipgloss/v2"
)

// Styles holds every style the screens use, built for a dark or a light
// background (lipgloss.LightDark). The root model rebuilds it when the terminal
// reports its background colour, so text reads on both.
type Styles struct {
	IsDark bool

	App        lipgloss.Style
	Title      lipgloss.Style // screen titles and the chat header
	Subtle     lipgloss.Style // secondary text: times, hints, previews
	Faint      lipgloss.Style // separators
	Error      lipgloss.Style
	Accent     lipgloss.Style
	Selected   lipgloss.Style // the highlighted inbox row
	Cursor     lipgloss.Style // the bar in front of the selected row
	Unread     lipgloss.Style // unread badge
	UnreadName lipgloss.Style // a conversation name with unread messages
	Mention    lipgloss.Style // a message that mentions the user, and the @N badge
	GroupMark  lipgloss.Style

	DaySep  lipgloss.Style
	Time    lipgloss.Style
	Me      lipgloss.Style // my name in a chat
	Content lipgloss.Style

	TickPending   lipgloss.Style
	TickSent      lipgloss.Style
	TickDelivered lipgloss.Style
	TickRead      lipgloss.Style
	TickFailed    lipgloss.Style

	StatusBar     lipgloss.Style
	StatusOK      lipgloss.Style
	StatusWarn    lipgloss.Style
	StatusBad     lipgloss.Style
	Overlay       lipgloss.Style // the box around finder, help, new chat, members
	Key           lipgloss.Style // a key in help
	KeyDesc       lipgloss.Style
	InputLabel    lipgloss.Style
	InputFocus    lipgloss.Style
	senderPalette []color.Color
	text          map[textKind]linePaint // message text by kind (body.go)
	// paints are styles drawn line by line without lipgloss's Render, by
	// the style's field (linepaint.go); senderPaints by palette entry.
	paints       map[*lipgloss.Style]linePaint
	senderPaints []linePaint
}

// NewStyles builds the styles for a dark (true) or light background.
func NewStyles(isDark bool) *Styles {
	ld := lipgloss.LightDark(isDark)
	c := lipgloss.Color
	fg := ld(c("#1F2328"), c("#E6EDF3"))
	subtle := ld(c("#59636E"), c("#9198A1"))
	faint := ld(c("#A0A8B0"), c("#484F58"))
	accent := ld(c("#8250DF"), c("#BC8CFF"))
	blue := ld(c("#0969DA"), c("#58A6FF"))
	green := ld(c("#1A7F37"), c("#3FB950"))
	yellow := ld(c("#9A6700"), c("#D29922"))
	red := ld(c("#CF222E"), c("#F85149"))
	selBg := ld(c("#DDF4FF"), c("#1F2A3A"))
	barBg := ld(c("#EAEEF2"), c("#161B22"))

	s := &Styles{IsDark: isDark}
	s.App = lipgloss.NewStyle().Foreground(fg)
	s.Title = lipgloss.NewStyle().Bold(true).Foreground(fg)
	s.Subtle = lipgloss.NewStyle().Foreground(subtle)
	s.Faint = lipgloss.NewStyle().Foreground(faint)
	s.Error = lipgloss.NewStyle().Foreground(red)
	s.Accent = lipgloss.NewStyle().Foreground(accent)
	s.Selected = lipgloss.NewStyle().Background(selBg)
	s.Cursor = lipgloss.NewStyle().Foreground(accent).Bold(true)
	s.Unread = lipgloss.NewStyle().Foreground(blue).Bold(true)
	s.UnreadName = lipgloss.NewStyle().Bold(true).Foreground(fg)
	s.Mention = lipgloss.NewStyle().Foreground(accent).Bold(true)
	s.GroupMark = lipgloss.NewStyle().Foreground(accent)
	s.DaySep = lipgloss.NewStyle().Foreground(subtle)
	s.Time = lipgloss.NewStyle().Foreground(subtle)
	s.Me = lipgloss.NewStyle().Bold(true).Foreground(subtle)
	s.Content = lipgloss.NewStyle().Foreground(fg)
	s.TickPending = lipgloss.NewStyle().Foreground(faint)
	s.TickSent = lipgloss.NewStyle().Foreground(subtle)
	s.TickDelivered = lipgloss.NewStyle().Foreground(subtle)
	s.TickRead = lipgloss.NewStyle().Foreground(blue).Bold(true)
	s.TickFailed = lipgloss.NewStyle().Foreground(red).Bold(true)
	s.StatusBar = lipgloss.NewStyle().Background(barBg).Foreground(subtle)
	s.StatusOK = lipgloss.NewStyle().Background(barBg).Foreground(green)
	s.StatusWarn = lipgloss.NewStyle().Background(barBg).Foreground(yellow)
	s.StatusBad = lipgloss.NewStyle().Background(barBg).Foreground(red)
	s.Overlay = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1)
	s.Key = lipgloss.NewStyle().Foreground(accent).Bold(true)
	s.KeyDesc = lipgloss.NewStyle().Foreground(subtle)
	s.InputLabel = lipgloss.NewStyle().Foreground(subtle)
	s.InputFocus = lipgloss.NewStyle().Foreground(accent).Bold(true)
	s.senderPalette = []color.Color{
		ld(c("#0550AE"), c("#79C0FF")),
		ld(c("#116329"), c("#56D364")),
		ld(c("#953800"), c("#FFA657")),
		ld(c("#8250DF"), c("#D2A8FF")),
		ld(c("#BF3989"), c("#FF9BCE")),
		ld(c("#1B7C83"), c("#39C5CF")),
		ld(c("#7D4E00"), c("#E3B341")),
	}
	return s
}

// Sender returns a stable colour for a user id, so a name looks the same in every
// conversation.
func (s *Styles) Sender(userID string) lipgloss.Style {
	return s.senderStyle(s.senderColour(userID))
}

// senderColour is the palette entry of a user id's colour.
func (s *Styles) senderColour(userID string) int {
	h := fnv.New32a()
	h.Write([]byte(userID))
	return int(h.Sum32() % uint32(len(s.senderPalette)))
}

func (s *Styles) senderStyle(i int) lipgloss.Style {
	return lipgloss.NewStyle().Bold(true).Foreground(s.senderPalette[i])
}

// inputStyles styles a text input. The cursor does not blink: a steady cursor
// costs no redraws and keeps screens reproducible.
func inputStyles(s *Styles) textinput.Styles {
	st := textinput.DefaultStyles(s.IsDark)
	st.Focused.Prompt = s.Accent
	st.Focused.Placeholder = s.Faint
	st.Blurred.Placeholder = s.Faint
	st.Cursor.Blink = false
	return st
}

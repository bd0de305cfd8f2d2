package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every binding of the TUI in one place; screens pick theirs for the
// short help in the status line, and the help overlay shows them all.
type KeyMap struct {
	// Everywhere.
	Quit       key.Binding
	Help       key.Binding
	Finder     key.Binding
	Search     key.Binding
	Mentions   key.Binding // the mentions view (mentions.go)
	NextUnread key.Binding
	Reconnect  key.Binding
	Mouse      key.Binding // f2: hand the mouse to the terminal (select, copy) or take it back

	// Lists and history (vim keys as well as arrows).
	Up       key.Binding
	Down     key.Binding
	Top      key.Binding
	Bottom   key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	HalfUp   key.Binding
	HalfDown key.Binding
	Open     key.Binding
	Back     key.Binding

	// Inbox.
	NewDirect key.Binding
	NewGroup  key.Binding
	Channels  key.Binding // the public channels, to browse and join

	// Chat.
	Compose     key.Binding
	Send        key.Binding
	Newline     key.Binding
	Editor      key.Binding
	Members     key.Binding
	FirstUnread key.Binding
	Mute        key.Binding
	Leave       key.Binding // pressed twice: leave the open group or channel (leave.go)

	// Acting on messages (actions.go): a selection, then a key.
	Select  key.Binding
	Reply   key.Binding
	Quoted  key.Binding // to the message a reply answers
	React   key.Binding
	EditMsg key.Binding
	Delete  key.Binding
	// Attachments: open (outside the terminal) or save the selected one, or
	// the newest.
	OpenFile key.Binding
	SaveFile key.Binding
	Recall   key.Binding // writing: earlier messages typed here
	Forward  key.Binding // writing: back towards the newest typed

	// Forms.
	NextField   key.Binding
	PrevField   key.Binding
	Submit      key.Binding
	Cancel      key.Binding
	ToggleMode  key.Binding
	FinderUp    key.Binding
	FinderDown  key.Binding
	FinderOpen  key.Binding
	FinderClose key.Binding
}

// DefaultKeyMap returns the bindings people expect from terminal chat clients.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return KeyMap{
		Quit:       b([]string{"ctrl+c"}, "ctrl+c", "quit (asks if drafts are unsent)"),
		Help:       b([]string{"?", "f1"}, "?/f1", "help"),
		Finder:     b([]string{"ctrl+k"}, "ctrl+k", "switch conversation"),
		Search:     b([]string{"/"}, "/", "search messages (in a chat: that chat)"),
		Mentions:   b([]string{"@"}, "@", "mentions of you"),
		NextUnread: b([]string{"alt+n", "u"}, "u/alt+n", "next unread"),
		Reconnect:  b([]string{"ctrl+r"}, "ctrl+r", "reconnect now"),
		Mouse:      b([]string{"f2"}, "f2", "select text (mouse)"),

		Up:       b([]string{"k", "up"}, "k/↑", "up"),
		Down:     b([]string{"j", "down"}, "j/↓", "down"),
		Top:      b([]string{"g", "home"}, "g", "top"),
		Bottom:   b([]string{"G", "end"}, "G", "bottom"),
		PageUp:   b([]string{"pgup", "ctrl+b"}, "pgup", "page up"),
		PageDown: b([]string{"pgdown", "ctrl+f"}, "pgdn", "page down"),
		HalfUp:   b([]string{"ctrl+u"}, "ctrl+u", "half page up"),
		HalfDown: b([]string{"ctrl+d"}, "ctrl+d", "half page down"),
		Open:     b([]string{"enter", "l", "right"}, "enter", "open"),
		Back:     b([]string{"esc", "h", "left", "q"}, "esc", "back"),

		NewDirect: b([]string{"n"}, "n", "new direct chat"),
		NewGroup:  b([]string{"N"}, "N", "new group"),
		Channels:  b([]string{"C"}, "C", "browse channels (there L leaves)"),

		Compose: b([]string{"i", "a", "enter", "tab"}, "i", "write"),
		Send:    b([]string{"enter"}, "enter", "send"),
		Newline: b([]string{"alt+enter", "ctrl+j"}, "alt+enter", "newline"),
		Editor:  b([]string{"ctrl+o"}, "ctrl+o", "write in $EDITOR"),
		Members: b([]string{"m"}, "m", "members"),

		FirstUnread: b([]string{"U"}, "U", "first unread"),
		Mute:        b([]string{"M"}, "M", "mute / unmute"),
		Leave:       b([]string{"L"}, "L L", "leave the group or channel"),

		Select:   b([]string{"s", "v"}, "s/v", "select a message (then ↑/↓)"),
		Reply:    b([]string{"r"}, "r", "reply to it (or the newest)"),
		Quoted:   b([]string{"p"}, "p", "go to what it replies to"),
		React:    b([]string{"+"}, "+", "react with an emoji"),
		EditMsg:  b([]string{"e"}, "e", "edit it (or your newest)"),
		Delete:   b([]string{"D"}, "D D", "delete it for everyone"),
		OpenFile: b([]string{"o"}, "o", "open its attachment"),
		SaveFile: b([]string{"w"}, "w", "save its attachment"),
		Recall:   b([]string{"ctrl+p"}, "ctrl+p", "earlier typed messages"),
		Forward:  b([]string{"ctrl+n"}, "ctrl+n", "later typed messages"),

		NextField:   b([]string{"tab", "down"}, "tab", "next field"),
		PrevField:   b([]string{"shift+tab", "up"}, "shift+tab", "previous field"),
		Submit:      b([]string{"enter"}, "enter", "submit"),
		Cancel:      b([]string{"esc"}, "esc", "cancel"),
		ToggleMode:  b([]string{"ctrl+r"}, "ctrl+r", "log in / register"),
		FinderUp:    b([]string{"up", "ctrl+p"}, "↑", "previous"),
		FinderDown:  b([]string{"down", "ctrl+n"}, "↓", "next"),
		FinderOpen:  b([]string{"enter"}, "enter", "open"),
		FinderClose: b([]string{"esc", "ctrl+k"}, "esc", "close"),
	}
}

// helpSection is one titled group of bindings in the help overlay.
type helpSection struct {
	Title    string
	Bindings []key.Binding
}

func (k KeyMap) sections() []helpSection {
	// Keys a screen reads itself rather than through the KeyMap, shown so the
	// card is complete.
	note := func(keys, desc string) key.Binding { return key.NewBinding(key.WithHelp(keys, desc)) }
	return []helpSection{
		{"Everywhere", []key.Binding{k.Finder, k.Search, k.Mentions, k.NextUnread, k.Reconnect, k.Mouse, k.Help, k.Quit}},
		{"Lists: inbox and chat", []key.Binding{k.Up, k.Down, k.HalfUp, k.HalfDown, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Open, k.Back}},
		{"Inbox", []key.Binding{k.NewDirect, k.NewGroup, k.Channels}},
		{"Chat: reading (esc)", []key.Binding{k.FirstUnread, k.Compose, k.Members, note("a", "add members (in members)"), k.Mute, k.Leave}},
		{"Chat: on a message", []key.Binding{k.Select, k.Reply, k.Quoted, k.React, note("1–6", "quick reaction 👍 ❤ 😂 🎉 😮 🙏"), k.EditMsg, k.Delete, k.OpenFile, k.SaveFile}},
		{"Chat: writing", []key.Binding{k.Send, k.Newline, note("ctrl+j", "newline, where alt+enter is the terminal's"), k.Editor, note("/attach", "PATH [TEXT]: send a file"), k.Cancel, k.Recall, k.Forward}},
		{"Finder, search, forms", []key.Binding{k.FinderUp, k.FinderDown, k.FinderOpen, k.FinderClose, k.NextField, k.PrevField}},
	}
}

// Package displayname is the one rule for showing a person: by their display
// name, with their user id beside it when the name could be taken for
// someone else's. Display names are chosen by their users and are not
// unique; the id is. The CLI prints every name with its id ("Alice Liddell
// (alice)", Label); the TUI, short of room, shows the name alone unless it
// reads like another known person's name or id (Directory).
package displayname

import (
	"strings"

	"github.com/chatterm/chat/internal/termtext"
)

// Name is a display name as shown: through the sanitiser, on one line, and
// "" when it adds nothing to the id (empty, or the id itself).
func Name(userID, displayName string) string {
	name := strings.TrimSpace(termtext.OneLine(displayName))
	if name == "" || termtext.Blank(name) || strings.EqualFold(name, userID) {
		return ""
	}
	return name
}

// Label is "name (id)", or the id alone when the name adds nothing.
func Label(userID, displayName string) string {
	if name := Name(userID, displayName); name != "" {
		return name + " (" + userID + ")"
	}
	return userID
}

// Directory holds the display names of the people a screen shows and says
// how each is to appear. The zero value is empty and ready.
type Directory struct {
	names map[string]string // by user id, as shown (Name)
	// keys counts, for each name key (termtext.NameKey), the known people
	// whose name or id has it: a key held by two is a name to tell apart.
	keys map[string]map[string]bool
	// version moves with every change, for caches of drawn names.
	version int
}

// Set records a user's display name; it reports whether what any user
// shows as changed (then Version moves).
func (d *Directory) Set(userID, displayName string) bool {
	name := Name(userID, displayName)
	old, known := d.names[userID]
	if known && old == name {
		return false
	}
	if d.names == nil {
		d.names, d.keys = map[string]string{}, map[string]map[string]bool{}
	}
	if known && old != "" {
		d.drop(termtext.NameKey(old), userID)
	}
	if !known {
		d.add(termtext.NameKey(userID), userID)
	}
	if name != "" {
		d.add(termtext.NameKey(name), userID)
	}
	d.names[userID] = name
	d.version++
	return true
}

func (d *Directory) add(key, userID string) {
	if d.keys[key] == nil {
		d.keys[key] = map[string]bool{}
	}
	d.keys[key][userID] = true
}

func (d *Directory) drop(key, userID string) {
	// The user's own id may share the key (a name that is the id
	// respelled): it stays.
	if termtext.NameKey(userID) == key {
		return
	}
	delete(d.keys[key], userID)
	if len(d.keys[key]) == 0 {
		delete(d.keys, key)
	}
}

// Known reports whether the user's name has been set (possibly to none).
func (d *Directory) Known(userID string) bool {
	_, ok := d.names[userID]
	return ok
}

// Show is how the user appears: their name alone when no other known person's
// name or id reads like it, "name (id)" when one does, and the id when the
// name is unknown or adds nothing.
func (d *Directory) Show(userID string) string {
	name := d.names[userID]
	if name == "" {
		return userID
	}
	if len(d.keys[termtext.NameKey(name)]) > 1 {
		return name + " (" + userID + ")"
	}
	return name
}

// Label is the user with the id always beside the name: "name (id)", or
// the id when the name is unknown or adds nothing.
func (d *Directory) Label(userID string) string {
	if name := d.names[userID]; name != "" {
		return name + " (" + userID + ")"
	}
	return userID
}

// DisplayName is the user's name as Name gives it: "" when unknown or when
// it adds nothing to the id.
func (d *Directory) DisplayName(userID string) string { return d.names[userID] }

// UserIDs are the users whose names are known (Known), in no order.
func (d *Directory) UserIDs() []string {
	ids := make([]string, 0, len(d.names))
	for id := range d.names {
		ids = append(ids, id)
	}
	return ids
}

// Version moves whenever Show may answer differently for someone.
func (d *Directory) Version() int { return d.version }

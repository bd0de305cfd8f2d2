package displayname

import "testing"

func TestLabel(t *testing.T) {
	for _, c := range []struct{ id, name, want string }{
		{"alice", "Alice Liddell", "Alice Liddell (alice)"},
		{"alice", "", "alice"},
		{"alice", "ALICE", "alice"},
		{"alice", "  ", "alice"},
		{"alice", "\u3164", "alice"},                    // a Hangul filler: shows nothing
		{"mallory", "bob\x1b[2J\n", "bob[2J (mallory)"}, // the escape gone, its text left
	} {
		if got := Label(c.id, c.name); got != c.want {
			t.Errorf("Label(%q, %q) = %q, want %q", c.id, c.name, got, c.want)
		}
	}
}

func TestDirectory(t *testing.T) {
	var d Directory
	if got := d.Show("alice"); got != "alice" {
		t.Errorf("unknown: %q", got)
	}
	d.Set("alice", "Alice Liddell")
	d.Set("bob", "Bob")
	if got := d.Show("alice"); got != "Alice Liddell" {
		t.Errorf("a unique name shows alone: %q", got)
	}
	t.Run("a name like another's shows both ids", func(t *testing.T) {
		d.Set("alice2", "Alice Lidde\u0142\u0142") // not confusable: ł is no l
		d.Set("mallory", "Аlice Liddell")          // Cyrillic А: confusable
		if got := d.Show("mallory"); got != "Аlice Liddell (mallory)" {
			t.Errorf("mallory: %q", got)
		}
		if got := d.Show("alice"); got != "Alice Liddell (alice)" {
			t.Errorf("alice beside mallory: %q", got)
		}
		v := d.Version()
		d.Set("mallory", "Mallory")
		if d.Version() == v {
			t.Error("a change left the version")
		}
		if got := d.Show("alice"); got != "Alice Liddell" {
			t.Errorf("alice after mallory renamed: %q", got)
		}
	})
	t.Run("a name like another's id", func(t *testing.T) {
		d.Set("eve", "bob")
		if got := d.Show("eve"); got != "bob (eve)" {
			t.Errorf("eve named bob: %q", got)
		}
	})
	t.Run("same name twice", func(t *testing.T) {
		if d.Set("bob", "Bob") {
			t.Error("setting the same name again is a change")
		}
	})
}

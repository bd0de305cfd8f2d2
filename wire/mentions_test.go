package wire

import (
	"reflect"
	"strings"
	"testing"
)

func TestMentionTokens(t *testing.T) {
	for _, c := range []struct {
		content string
		want    []string
	}{
		{"@carol look", []string{"carol"}},
		{"ping @Carol, @bob.smith. and @carol again", []string{"carol", "bob.smith"}},
		{"mail bob@example.com", nil},
		{"@all and @here", []string{MentionAll, MentionHere}},
		{"(@dave) @-x @ @@erin", []string{"dave"}},
		{"é@frank", []string{"frank"}}, // a letter outside a user id's set does not hide it
		{"@" + strings.Repeat("a", MaxUserIDLen+1), nil},
		{"no mentions", nil},
	} {
		if got := MentionTokens(c.content); !reflect.DeepEqual(got, c.want) {
			t.Errorf("MentionTokens(%q) = %q, want %q", c.content, got, c.want)
		}
	}
}

func TestMentionsUser(t *testing.T) {
	if !MentionsUser([]string{"carol"}, "alice", "carol") || MentionsUser([]string{"carol"}, "alice", "bob") {
		t.Fatal("by id")
	}
	if !MentionsUser([]string{MentionHere}, "alice", "bob") || MentionsUser([]string{MentionAll}, "alice", "alice") {
		t.Fatal("@here mentions every other member, @all not its sender")
	}
}

// FuzzMentionTokens: never panics, and gives only names a user id can be (or
// the two group mentions), each written in the content, none twice.
func FuzzMentionTokens(f *testing.F) {
	for _, s := range []string{"@carol hi", "a@b @all", "@@x @here.", "\xff@z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		got := MentionTokens(content)
		seen := map[string]bool{}
		lower := strings.ToLower(content)
		for _, name := range got {
			if seen[name] {
				t.Fatalf("%q twice in %q", name, got)
			}
			seen[name] = true
			if name == MentionAll || name == MentionHere {
				continue
			}
			if err := ValidateUserID(name); err != nil {
				t.Fatalf("%q is not a user id: %v", name, err)
			}
			if !strings.Contains(lower, "@"+name) {
				t.Fatalf("%q is not written in %q", name, content)
			}
		}
	})
}

package localstore

import (
	"errors"
	"testing"

	"github.com/chatterm/chat/wire"
)

func TestMemberStatus(t *testing.T) {
	s := MustOpen(t)
	if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "a"), msg(dm, 2, "bob", "b")); err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		st, err := s.MemberStatus(ctx, dm, "bob")
		if err != nil {
			t.Fatal(err)
		}
		if want := (wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 2, LastReadSeq: 2}); st != want {
			t.Errorf("bob's status %+v, want %+v (his message at 2 implies he read it)", st, want)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := s.MemberStatus(ctx, dm, "carol"); !errors.Is(err, ErrNotFound) {
			t.Errorf("a member with no row: %v, want ErrNotFound", err)
		}
	})
}

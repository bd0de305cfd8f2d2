package localstore

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/chatterm/chat/wire"
)

// BenchmarkIndexQueued50k indexes a backlog of 50,000 messages and 500
// membership events in steps of 2,000, as the TUI does after a large fetch:
// what the membership lines' own pass (indexMembershipLines) adds to a step.
func BenchmarkIndexQueued50k(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		s, err := Open(ctx, filepath.Join(b.TempDir(), "cache.db"), Options{UserID: "me"})
		if err != nil {
			b.Fatal(err)
		}
		const grp = "g:crew"
		var ms []wire.Message
		for i := range 50_500 {
			m := msg(grp, int64(i+1), "bob", fmt.Sprintf("status update %d from the build farm", i))
			if i%101 == 100 {
				m.Kind, m.Content, m.Members = wire.KindAdded, "", []string{fmt.Sprint("user", i)}
			}
			ms = append(ms, m)
			if len(ms) == 2000 {
				if _, err := s.PutMessages(ctx, ms...); err != nil {
					b.Fatal(err)
				}
				ms = ms[:0]
			}
		}
		if _, err := s.PutMessages(ctx, ms...); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for left := 1; left > 0; {
			if left, err = s.IndexQueued(ctx, 2000); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

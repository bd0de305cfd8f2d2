package roletest

import (
	"slices"
	"sync"
	"testing"

	"github.com/chatterm/chat/server"
)

// Sequencer checks a server.Sequencer.
func Sequencer(t *testing.T, newSeq func(t *testing.T) server.Sequencer) {
	t.Run("OK", func(t *testing.T) {
		s, c := newSeq(t), ctx(t)
		a, b := id(t, "a"), id(t, "b")
		for want := int64(1); want <= 3; want++ {
			got, err := s.Next(c, a)
			if err != nil || got != want {
				t.Fatalf("Next(a) = %d, %v; want %d", got, err, want)
			}
		}
		// Counters are per conversation.
		if got, err := s.Next(c, b); err != nil || got != 1 {
			t.Fatalf("Next(b) = %d, %v; want 1", got, err)
		}
	})
	t.Run("NextN", func(t *testing.T) {
		s, c := newSeq(t), ctx(t)
		a := id(t, "a")
		if got, err := s.Next(c, a); err != nil || got != 1 {
			t.Fatalf("Next = %d, %v; want 1", got, err)
		}
		// 2, 3, 4 taken at once; the next single number follows them.
		if got, err := s.NextN(c, a, 3); err != nil || got != 4 {
			t.Fatalf("NextN(3) = %d, %v; want 4 (the last of 2..4)", got, err)
		}
		if got, err := s.Next(c, a); err != nil || got != 5 {
			t.Fatalf("Next after NextN = %d, %v; want 5", got, err)
		}
		if got, err := s.NextN(c, id(t, "new"), 2); err != nil || got != 2 {
			t.Fatalf("NextN(2) of a new conversation = %d, %v; want 2", got, err)
		}
		if _, err := s.NextN(c, a, 0); err == nil {
			t.Error("NextN(0) succeeded")
		}
		if _, err := s.NextN(c, "", 2); err == nil {
			t.Error("NextN(\"\", 2) succeeded")
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		s, c := newSeq(t), ctx(t)
		conv := id(t, "c")
		const workers, each = 100, 20
		got := make([][]int64, workers)
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				for range each {
					n, err := s.Next(c, conv)
					if err != nil {
						errs <- err
						return
					}
					got[w] = append(got[w], n)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		var all []int64
		for w, seq := range got {
			// Each caller sees its own numbers strictly increasing.
			for i := 1; i < len(seq); i++ {
				if seq[i] <= seq[i-1] {
					t.Fatalf("worker %d got %d after %d", w, seq[i], seq[i-1])
				}
			}
			all = append(all, seq...)
		}
		slices.Sort(all)
		// Unique and without gaps: exactly 1..workers*each.
		for i, n := range all {
			if n != int64(i+1) {
				t.Fatalf("sorted numbers: position %d holds %d, want %d (duplicate or gap)", i, n, i+1)
			}
		}
	})
	t.Run("Release", func(t *testing.T) {
		s, c := newSeq(t), ctx(t)
		conv := id(t, "c")
		if last, err := s.NextN(c, conv, 5); err != nil || last != 5 {
			t.Fatalf("NextN(5) = %d, %v; want 5", last, err)
		}
		// 4 and 5 unused, and nothing taken since: given back.
		if err := s.Release(c, conv, 5, 2); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Next(c, conv); err != nil || got != 4 {
			t.Fatalf("Next after giving back 4..5 = %d, %v; want 4", got, err)
		}
		// 4 was taken after 3..4 were: giving them back would hand 4 out twice.
		if err := s.Release(c, conv, 3, 1); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Next(c, conv); err != nil || got != 5 {
			t.Fatalf("Next after a refused give-back = %d, %v; want 5", got, err)
		}
		if err := s.Release(c, conv, 5, 0); err == nil {
			t.Fatal("Release of no numbers: no error")
		}
	})
	t.Run("Reseed", func(t *testing.T) {
		s, c := newSeq(t), ctx(t)
		conv := id(t, "c")
		next := func(want int64) {
			t.Helper()
			if got, err := s.Next(c, conv); err != nil || got != want {
				t.Fatalf("Next = %d, %v; want %d", got, err, want)
			}
		}
		reseed := func(last int64) {
			t.Helper()
			if err := s.Reseed(c, conv, last); err != nil {
				t.Fatalf("Reseed(%d): %v", last, err)
			}
		}
		next(1)
		reseed(10)
		next(11)
		reseed(5) // never lowers
		next(12)
		reseed(12) // equal: unchanged
		next(13)
		fresh := id(t, "fresh")
		if err := s.Reseed(c, fresh, 7); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Next(c, fresh); err != nil || got != 8 {
			t.Fatalf("Next after Reseed(7) of a new conversation = %d, %v; want 8", got, err)
		}
	})
	t.Run("ErrEmptyID", func(t *testing.T) {
		s, c := newSeq(t), ctx(t)
		if _, err := s.Next(c, ""); err == nil {
			t.Error("Next(\"\") succeeded")
		}
		if err := s.Reseed(c, "", 3); err == nil {
			t.Error("Reseed(\"\") succeeded")
		}
	})
}

package localstore

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
)

func TestDraftsKeptAcrossOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cache.db")
	s, err := Open(ctx, path, Options{UserID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetDrafts(ctx, map[string]string{"dm:bob:me": "half a thought", "g:team": "line one\nline two"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetDrafts(ctx, map[string]string{"g:team": ""}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddInput(ctx, "dm:carol:me", "first"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddInput(ctx, "dm:carol:me", "second"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(ctx, path, Options{UserID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	drafts, err := s.Drafts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"dm:bob:me": "half a thought"}; !reflect.DeepEqual(drafts, want) {
		t.Fatalf("drafts after reopening = %q, want %q", drafts, want)
	}
	hist, err := s.InputHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{"dm:carol:me": {"first", "second"}}; !reflect.DeepEqual(hist, want) {
		t.Fatalf("input history after reopening = %q, want %q", hist, want)
	}
}

func TestAddInputClearsTheDraft(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	if err := s.SetDrafts(ctx, map[string]string{"dm:bob:me": "hello", "dm:carol:me": "other"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddInput(ctx, "dm:bob:me", "hello"); err != nil {
		t.Fatal(err)
	}
	drafts, err := s.Drafts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"dm:carol:me": "other"}; !reflect.DeepEqual(drafts, want) {
		t.Fatalf("drafts after sending bob's = %q, want %q", drafts, want)
	}
}

func TestInputHistoryBoundedWithoutRepeats(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	for i := range MaxInputHistory + 20 {
		for range 2 { // the same text twice in a row is kept once
			if err := s.AddInput(ctx, "dm:bob:me", fmt.Sprint("text ", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	hist, err := s.InputHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := hist["dm:bob:me"]
	if len(got) != MaxInputHistory {
		t.Fatalf("kept %d texts, want %d", len(got), MaxInputHistory)
	}
	for i, text := range got {
		if want := fmt.Sprint("text ", i+20); text != want {
			t.Fatalf("text %d = %q, want %q (the oldest go first, in order)", i, text, want)
		}
	}
}

func TestDraftsRefuseABadConversation(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	if err := s.SetDrafts(ctx, map[string]string{"dm:bob:me": "kept", "not a conversation": "x"}); err == nil {
		t.Fatal("SetDrafts took a bad conversation id")
	}
	if err := s.AddInput(ctx, "", "x"); err == nil {
		t.Fatal("AddInput took an empty conversation id")
	}
	drafts, err := s.Drafts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(drafts) != 0 {
		t.Fatalf("a refused SetDrafts stored %q", drafts)
	}
}

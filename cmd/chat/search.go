package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

const searchUsage = `
Usage: chat search [--with USER | --group ID] [--limit N] [--before CURSOR] [--raw] [--json] WORDS...

Searches the messages cached on this machine (what the terminal UI has shown
or fetched, and what chat fetch filled in) for messages with every word, as a
word or the start of one, case and accents ignored. Newest first, a page of
--limit at a time: when there are more, the last line on stderr says how to
get the next page (--before CURSOR); with --json the cursor is also the
"next" field of a last line {"next": CURSOR}. With --json, one message object
per line, with a "snippet" field; --raw prints text as written, not drawn
from its Markdown.

To search a conversation's whole history, fill the cache first:
  chat fetch --with bob

Examples:
  chat search deploy failed
  chat search --group g:7f3k2 --limit 5 standup
  chat search --with bob --before 4812 invoice
`

const fetchUsage = `
Usage: chat fetch (--with USER | --group ID)

Puts a conversation's whole history into this machine's cache, so that
chat search and the terminal UI's search cover all of it. Progress goes to
stderr.

Examples:
  chat fetch --with bob && chat search --with bob invoice
`

func (a *app) runSearch(ctx context.Context, args []string) error {
	fs := a.flags("search", searchUsage)
	with := fs.String("with", "", "only the direct conversation with `USER`")
	group := fs.String("group", "", "only conversation `ID`")
	limit := fs.Int("limit", 20, "at most `N` messages (1-500)")
	asJSON := fs.Bool("json", false, "one JSON message per line, with a snippet")
	beforeFlag := fs.String("before", "", "the page after `CURSOR` (as the page before printed it)")
	raw := fs.Bool("raw", false, "print message text as stored, its Markdown not drawn")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *limit < 1 || *limit > 500 {
		return usagef("--limit must be between 1 and 500")
	}
	var before localstore.SearchCursor
	if *beforeFlag != "" {
		if before, err = localstore.ParseSearchCursor(*beforeFlag); err != nil {
			return usagef("--before: %s", wire.ErrorMessage(err))
		}
	}
	query := strings.Join(pos, " ")
	if strings.TrimSpace(query) == "" {
		return usagef("what to search for? give one word or more")
	}
	api, acct, store, err := a.openCache(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	conv := ""
	if *with != "" || *group != "" {
		if conv, err = target(ctx, api, acct, "--with", *with, *group, true); err != nil {
			return err
		}
	}
	hits, next, err := store.SearchPage(ctx, localstore.SearchQuery{Words: query, ConversationID: conv, Before: before, Limit: *limit})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(a.stdout)
	quotes := cachedQuotes(ctx, store, nil) // the cache alone: search works offline
	// Names are asked of the server; offline, senders appear by id after the
	// first failed request.
	who := cachedNames(ctx, api)
	text := a.textFormat(*raw)
	for _, h := range hits {
		if *asJSON {
			plain := strings.NewReplacer(localstore.SnippetStart, "", localstore.SnippetEnd, "").Replace(h.Snippet)
			if err := enc.Encode(struct {
				wire.Message
				Snippet string `json:"snippet"`
			}{h.Message, plain}); err != nil {
				return err
			}
			continue
		}
		printMessage(a.stdout, h.Message, conv == "", quotes, who, text)
	}
	switch {
	case !next.IsZero() && *asJSON:
		if err := enc.Encode(struct {
			Next string `json:"next"`
		}{next.String()}); err != nil {
			return err
		}
	case !next.IsZero():
		fmt.Fprintf(a.stderr, "(more: the same search with --before %s)\n", next)
	case len(hits) == 0 && !*asJSON && before.IsZero():
		fmt.Fprintln(a.stderr, "(nothing found in the cache; chat fetch --with USER fills it with a whole conversation)")
	}
	return nil
}

func (a *app) runFetch(ctx context.Context, args []string) error {
	fs := a.flags("fetch", fetchUsage)
	with := fs.String("with", "", "the direct conversation with `USER`")
	group := fs.String("group", "", "conversation `ID`")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	api, acct, store, err := a.openCache(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	conv, err := target(ctx, api, acct, "--with", *with, *group, true)
	if err != nil {
		return err
	}
	tty := a.stderrTerminal()
	err = client.FillHistory(ctx, api, store, conv, func(p client.FillProgress) {
		if tty {
			fmt.Fprintf(a.stderr, "\rfetched %d of %d", p.Got, p.Total)
		}
	})
	if tty {
		fmt.Fprintln(a.stderr)
	}
	if err != nil {
		return peerTarget(ctx, api, *with, err)
	}
	fmt.Fprintf(a.stderr, "%s: the whole history is in the cache\n", termtext.OneLine(conv))
	return nil
}

// openCache logs in and opens the account's cache, the one the terminal UI
// uses (several processes may share it).
func (a *app) openCache(ctx context.Context) (*client.API, client.Account, *localstore.Store, error) {
	api, acct, err := a.login()
	if err != nil {
		return nil, acct, nil, err
	}
	me, err := self(ctx, api, acct)
	if err != nil {
		return nil, acct, nil, err
	}
	path, err := a.config().CachePath(acct.Server, me)
	if err != nil {
		return nil, acct, nil, err
	}
	store, err := localstore.Open(ctx, path, localstore.Options{UserID: me})
	if err != nil {
		return nil, acct, nil, err
	}
	return api, acct, store, nil
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chatterm/chat/wire"
)

const mentionsUsage = `
Usage: chat mentions [--limit N] [--next CURSOR | --before TIME] [--raw] [--json]
       chat mentions --group ID [--all admins|everyone]

Lists the messages that mention you (@you, or @all/@here in a group), newest
first, across your conversations. When older ones exist, the next page's
--next is on stderr (with --json too). --before lists those sent before a
time. With --json, one message object per line; --raw prints text as
written, not drawn from its Markdown.

With --group, shows the group's rule for @all and @here; --all admins keeps
them for the group's admins (a member's message using one is then refused),
--all everyone gives them back to every member (group admins only).

Examples:
  chat mentions
  chat mentions --json | jq -r '.conversation_id + " " + .content'
  chat mentions --group g:7f3k2 --all admins
`

func (a *app) runMentions(ctx context.Context, args []string) error {
	fs := a.flags("mentions", mentionsUsage)
	limit := fs.Int("limit", wire.DefaultPageSize, fmt.Sprintf("at most `N` messages (1-%d)", wire.MaxMentionsPage))
	next := fs.String("next", "", "the page after `CURSOR` (as printed for the next page)")
	beforeFlag := fs.String("before", "", "only mentions sent before `TIME` (RFC 3339)")
	asJSON := fs.Bool("json", false, "one JSON message per line")
	raw := fs.Bool("raw", false, "print message text as stored, its Markdown not drawn")
	group := fs.String("group", "", "show or set the @all rule of group `ID`")
	all := fs.String("all", "", "with --group: who may use @all and @here: `admins` or everyone")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *all != "" && *group == "" {
		return usagef("--all needs --group")
	}
	if *group != "" {
		return a.mentionRule(ctx, *group, *all, *asJSON)
	}
	if *limit < 1 || *limit > wire.MaxMentionsPage {
		return usagef("--limit must be between 1 and %d", wire.MaxMentionsPage)
	}
	cursor := *next
	var before time.Time
	switch {
	case cursor != "" && *beforeFlag != "":
		return usagef("give --next or --before, not both")
	case cursor != "":
		if _, err := wire.ParseMentionCursor(cursor); err != nil {
			return usagef("--next must be a cursor as printed for the next page")
		}
	case *beforeFlag != "":
		var err error
		if before, err = time.Parse(time.RFC3339Nano, *beforeFlag); err != nil {
			return usagef("--before must be an RFC 3339 time such as 2026-11-26T09:30:00Z")
		}
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	resp, err := api.Mentions(ctx, cursor, before, *limit)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(a.stdout)
	quotes := cachedQuotes(ctx, nil, api)
	who := cachedNames(ctx, api)
	text := a.textFormat(*raw)
	for _, m := range resp.Mentions {
		if *asJSON {
			if err := enc.Encode(m); err != nil {
				return err
			}
			continue
		}
		printMessage(a.stdout, m, true, quotes, who, text)
	}
	if resp.Next != "" {
		fmt.Fprintf(a.stderr, "(older mentions: add --next %s)\n", resp.Next)
	}
	return nil
}

// mentionRule shows a group's @all rule, or sets it to all (admins or
// everyone) first.
func (a *app) mentionRule(ctx context.Context, group, all string, asJSON bool) error {
	if err := wire.ValidateConversationID(group); err != nil {
		return usagef("--group: %s", wire.ErrorMessage(err))
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	var rule wire.MentionSetting
	switch all {
	case "":
		rule, err = api.MentionSetting(ctx, group)
	case "admins", "everyone":
		rule, err = api.SetMentionSetting(ctx, group, wire.MentionSetting{AllAdminsOnly: all == "admins"})
	default:
		return usagef("--all must be admins or everyone")
	}
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(a.stdout).Encode(rule)
	}
	who := "every member"
	if rule.AllAdminsOnly {
		who = "admins only"
	}
	fmt.Fprintf(a.stdout, "%s: @all and @here: %s\n", group, who)
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

const presenceUsage = `
Usage: chat presence (--with USER | --group ID) [--json]

Prints whether each other member of the conversation is online now, or when
they were last seen; "hidden" for members who hide it (and for everyone, when
you hide yours: chat profile --hide-presence on).

Examples:
  chat presence --with bob
  chat presence --group g:7f3k2 --json
`

func (a *app) runPresence(ctx context.Context, args []string) error {
	fs := a.flags("presence", presenceUsage)
	with := fs.String("with", "", "the direct conversation with `USER`")
	group := fs.String("group", "", "conversation `ID`")
	asJSON := fs.Bool("json", false, "the answer as JSON")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	api, acct, err := a.login()
	if err != nil {
		return err
	}
	conv, err := target(ctx, api, acct, "--with", *with, *group, true)
	if err != nil {
		return err
	}
	resp, err := api.Presence(ctx, conv)
	if err != nil {
		return peerTarget(ctx, api, *with, err)
	}
	if *asJSON {
		return json.NewEncoder(a.stdout).Encode(resp)
	}
	for _, m := range resp.Members {
		fmt.Fprintf(a.stdout, "%s\t%s\n", termtext.OneLine(m.UserID), presenceText(m, time.Now()))
	}
	return nil
}

// presenceText is client.PresenceWords, with "hidden" and "offline" (no
// record) said, since a line of output cannot be blank.
func presenceText(m wire.MemberPresence, now time.Time) string {
	if w := client.PresenceWords(m, now); w != "" {
		return w
	}
	if m.Hidden {
		return "hidden"
	}
	return "offline"
}

const profileUsage = `
Usage: chat profile [--name "DISPLAY NAME"] [--status TEXT] [--hide-presence on|off] [--json]

Prints your profile, after changing what the flags give. --hide-presence on
hides whether you are online and when you were last seen from everyone (and
theirs from you).

Examples:
  chat profile
  chat profile --name "Alice Liddell" --status "on call"
  chat profile --hide-presence on
`

func (a *app) runProfile(ctx context.Context, args []string) error {
	fs := a.flags("profile", profileUsage)
	name := fs.String("name", "", "your display `NAME`")
	status := fs.String("status", "", "your status `TEXT` (\"\" with --status= clears it)")
	hide := fs.String("hide-presence", "", "`on` or off")
	asJSON := fs.Bool("json", false, "the profile as JSON")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	var upd wire.ProfileUpdate
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "name":
			upd.DisplayName = name
		case "status":
			upd.Status = status
		}
	})
	switch *hide {
	case "":
	case "on", "off":
		on := *hide == "on"
		upd.HidePresence = &on
	default:
		return usagef("--hide-presence is on or off, not %q", *hide)
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	var p wire.Profile
	if upd == (wire.ProfileUpdate{}) {
		p, err = api.Me(ctx)
	} else {
		p, err = api.UpdateMe(ctx, upd)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(a.stdout).Encode(p)
	}
	fmt.Fprintf(a.stdout, "user:      %s\nname:      %s\n", termtext.OneLine(p.UserID), termtext.OneLine(p.DisplayName))
	if p.Status != "" {
		fmt.Fprintf(a.stdout, "status:    %s\n", termtext.OneLine(p.Status))
	}
	presence := "shown"
	if p.HidePresence {
		presence = "hidden"
	}
	fmt.Fprintf(a.stdout, "presence:  %s\n", presence)
	return nil
}

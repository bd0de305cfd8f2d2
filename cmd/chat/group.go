package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

const groupUsage = `
Usage:
  chat group create NAME --members USER,USER...   prints the new group's id
  chat group add ID USER...                        add members (group admins)
  chat group remove ID USER...                     remove members (admins; anyone may remove themself)
  chat group show ID                               the group and its members
  chat group rename ID NAME                        rename it (admins)
  chat group topic ID TEXT                         set its topic, "" to clear it (admins)
  chat group admin ID USER [--revoke]              make USER admin, or take it back (admins)

Each change leaves a line in the conversation ("alice added carol") that
every member sees; the commands print what they did.

Examples:
  chat group create ops --members alice,bob
  chat group add g:7f3k2 carol
  chat group remove g:7f3k2 "$(chat whoami)"    # leave
`

func (a *app) runGroup(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("give a group command: create, add, remove or show")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help":
		fmt.Fprint(a.stdout, strings.TrimLeft(groupUsage, "\n"))
		return nil
	case "create":
		a.cmd = "group create"
		return a.groupCreate(ctx, args)
	case "add", "remove":
		a.cmd = "group " + sub
		return a.groupMembers(ctx, sub, args)
	case "show":
		a.cmd = "group show"
		return a.groupShow(ctx, args)
	case "rename", "topic", "admin":
		a.cmd = "group " + sub
		return a.groupChange(ctx, sub, args)
	}
	return usagef("unknown group command %q: use create, add, remove, show, rename, topic or admin", sub)
}

func splitMembers(s string) []string {
	var out []string
	for _, m := range strings.Split(s, ",") {
		m = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(m), "@"))
		if m != "" {
			out = append(out, m)
		}
	}
	return out
}

func validMembers(ms []string) error {
	for _, m := range ms {
		if err := wire.ValidateUserID(m); err != nil {
			return usagef("member %q: %s", m, wire.ErrorMessage(err))
		}
	}
	return nil
}

func (a *app) groupCreate(ctx context.Context, args []string) error {
	fs := a.flags("group create", groupUsage)
	members := fs.String("members", "", "comma-separated `USERS` besides you")
	asJSON := fs.Bool("json", false, "print the conversation as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give one NAME (quote it if it has spaces)")
	}
	ms := splitMembers(*members)
	if len(ms) == 0 {
		return usagef("give --members USER,USER")
	}
	if err := validMembers(ms); err != nil {
		return err
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	c, err := api.CreateConversation(ctx, wire.CreateConversationRequest{Type: wire.Group, Name: pos[0], Members: ms})
	if err != nil {
		return err
	}
	return a.printCreated(c, *asJSON)
}

func (a *app) groupMembers(ctx context.Context, sub string, args []string) error {
	fs := a.flags(a.cmd, groupUsage)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("give the group ID and at least one USER")
	}
	id := pos[0]
	if err := wire.ValidateConversationID(id); err != nil {
		return usagef("%s", wire.ErrorMessage(err))
	}
	var ms []string
	for _, p := range pos[1:] {
		ms = append(ms, splitMembers(p)...)
	}
	if err := validMembers(ms); err != nil {
		return err
	}
	api, self, err := a.login()
	if err != nil {
		return err
	}
	if sub == "add" {
		c, err := api.AddMembers(ctx, id, ms)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "you added %s to %s (%s)\n", strings.Join(ms, ", "), termtext.OneLine(c.Name), id)
		return nil
	}
	for _, m := range ms {
		if err := api.RemoveMember(ctx, id, m); err != nil {
			return err
		}
		if m == self.UserID {
			fmt.Fprintf(a.stdout, "you left %s\n", id)
		} else {
			fmt.Fprintf(a.stdout, "you removed %s from %s\n", m, id)
		}
	}
	return nil
}

func (a *app) groupShow(ctx context.Context, args []string) error {
	fs := a.flags("group show", groupUsage)
	asJSON := fs.Bool("json", false, "print the conversation as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give one group ID")
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	c, err := api.Conversation(ctx, pos[0])
	if err != nil {
		return asTarget(err)
	}
	if *asJSON {
		return json.NewEncoder(a.stdout).Encode(c)
	}
	fmt.Fprintf(a.stdout, "%s %q (%s), last seq %d\n", c.ConversationID, c.Name, c.Type, c.LastSeq)
	for _, p := range c.Participants {
		fmt.Fprintf(a.stdout, "  %-20s %s\n", p.UserID, p.Role)
	}
	return nil
}

// printCreated prints a conversation chat just created: its id, for a
// script's $(...), or the whole of it with --json.
func (a *app) printCreated(c wire.Conversation, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(a.stdout).Encode(c)
	}
	fmt.Fprintln(a.stdout, c.ConversationID)
	return nil
}

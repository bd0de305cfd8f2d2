package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

const channelsUsage = `
Usage:
  chat channels [--json]            list the server's public channels (* = you are in it)

A channel is a group any account can list, join and leave by itself. Joining
shows its whole history. See chat channel --help.

Examples:
  chat channels
  chat channels --json | jq -r 'select(.joined | not) | .conversation_id'
`

const channelUsage = `
Usage:
  chat channel create NAME [--topic TEXT] [--json]   prints the new channel's id
  chat channel join ID                               join a channel (its history is yours to read)
  chat channel leave ID                              leave it

A channel's admins rename it and set its topic with chat group rename/topic.

Examples:
  chat channel create ops --topic "deploys and incidents"
  chat channel join g:7f3k2
`

func (a *app) runChannels(ctx context.Context, args []string) error {
	fs := a.flags("channels", channelsUsage)
	asJSON := fs.Bool("json", false, "print one JSON object per channel")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("channels takes no arguments")
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	list, err := api.AllChannels(ctx)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(a.stdout)
	for _, c := range list {
		if *asJSON {
			if err := enc.Encode(c); err != nil {
				return err
			}
			continue
		}
		mark := " "
		if c.Joined {
			mark = "*"
		}
		// Names and topics are other users' text: through the sanitiser.
		line := fmt.Sprintf("%s %s %s", mark, c.ConversationID, termtext.OneLine(c.Name))
		if c.Topic != "" {
			line += " — " + termtext.OneLine(c.Topic)
		}
		fmt.Fprintln(a.stdout, line)
	}
	if len(list) == 0 && !*asJSON {
		fmt.Fprintln(a.stderr, "(no channels yet: chat channel create NAME)")
	}
	return nil
}

func (a *app) runChannel(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("give a channel command: create, join or leave")
	}
	sub, args := args[0], args[1:]
	a.cmd = "channel " + sub
	switch sub {
	case "-h", "-help", "--help":
		fmt.Fprint(a.stdout, strings.TrimLeft(channelUsage, "\n"))
		return nil
	case "create":
		return a.channelCreate(ctx, args)
	case "join", "leave":
		fs := a.flags(a.cmd, channelUsage)
		pos, err := parse(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return usagef("give one channel ID")
		}
		if err := wire.ValidateConversationID(pos[0]); err != nil {
			return usagef("%s", wire.ErrorMessage(err))
		}
		api, self, err := a.login()
		if err != nil {
			return err
		}
		if sub == "leave" {
			if err := api.RemoveMember(ctx, pos[0], self.UserID); err != nil {
				return asTarget(err)
			}
			fmt.Fprintf(a.stdout, "you left %s\n", pos[0])
			return nil
		}
		c, err := api.JoinChannel(ctx, pos[0])
		if err != nil {
			return asTarget(err)
		}
		fmt.Fprintf(a.stdout, "you joined %s (%s)\n", termtext.OneLine(c.Name), c.ConversationID)
		return nil
	}
	return usagef("unknown channel command %q: use create, join or leave", sub)
}

func (a *app) channelCreate(ctx context.Context, args []string) error {
	fs := a.flags("channel create", channelUsage)
	topic := fs.String("topic", "", "the channel's `TEXT` topic")
	asJSON := fs.Bool("json", false, "print the conversation as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give one NAME (quote it if it has spaces)")
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	c, err := api.CreateConversation(ctx, wire.CreateConversationRequest{Type: wire.Channel, Name: pos[0], Topic: *topic})
	if err != nil {
		return err
	}
	return a.printCreated(c, *asJSON)
}

// groupChange is chat group rename|topic|admin: admins' changes, each of
// which leaves its line in the conversation, printed as the members see it.
func (a *app) groupChange(ctx context.Context, sub string, args []string) error {
	fs := a.flags(a.cmd, groupUsage)
	revoke := false
	if sub == "admin" {
		fs.BoolVar(&revoke, "revoke", false, "take admin back instead")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("give the group ID and one %s", map[string]string{"rename": "NAME", "topic": "TEXT (\"\" clears it)", "admin": "USER"}[sub])
	}
	id, arg := pos[0], pos[1]
	if err := wire.ValidateConversationID(id); err != nil {
		return usagef("%s", wire.ErrorMessage(err))
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	var line string
	switch sub {
	case "rename":
		_, err = api.ChangeConversation(ctx, id, wire.ConversationChange{Name: &arg})
		line = "you renamed the group to “" + arg + "”"
	case "topic":
		_, err = api.ChangeConversation(ctx, id, wire.ConversationChange{Topic: &arg})
		line = "you set the topic to “" + arg + "”"
		if arg == "" {
			line = "you cleared the topic"
		}
	case "admin":
		user := strings.ToLower(strings.TrimPrefix(arg, "@"))
		role, verb := wire.RoleAdmin, "you made %s admin"
		if revoke {
			role, verb = wire.RoleMember, "you took admin from %s"
		}
		_, err = api.SetRole(ctx, id, user, role)
		line = fmt.Sprintf(verb, user)
	}
	if err != nil {
		return asTarget(err)
	}
	fmt.Fprintln(a.stdout, termtext.OneLine(line))
	return nil
}

// printMembershipEvent writes a membership event as its line ("alice added
// carol"), the users as who labels them; false for any other message.
func printMembershipEvent(w io.Writer, ts, conv string, m wire.Message, who namer) bool {
	line := m.MembershipLine(who.label)
	if line == "" {
		return false
	}
	// A name or topic is a member's text: through the sanitiser, on one line.
	fmt.Fprintf(w, "%s %s#%d %s\n", ts, conv, m.SeqNo, termtext.OneLine(line))
	return true
}

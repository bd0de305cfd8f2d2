package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

const adminUsage = `
Usage: chat admin COMMAND [--json] [USER | INVITE]

Server administration, for the server's admins (the first account is one).

Commands:
  users                  every account: admin, disabled, online
  disable USER           no login, and every session ends at once
  enable USER            the account works again
  revoke-sessions USER   log USER out everywhere (their password stays)
  reset-password USER    a one-time code (24 h) for USER to set a new
                         password with: chat reset-password USER --code CODE
  grant USER             make USER a server admin
  revoke USER            take USER's admin right away (not your own)
  invites                unused invites: id, who made it, when it expires
  revoke-invite ID       an invite unusable (the id, or its start, from invites)

Examples:
  chat admin users
  chat admin disable mallory
  chat admin reset-password bob
`

const resetPasswordUsage = `
Usage: chat reset-password USER --code CODE [--password-stdin]

Sets a new password with the one-time code a server admin made
(chat admin reset-password USER), and logs in.

Examples:
  chat reset-password bob --code 4KXW3UX2ZQ5TOMPA6FJQFNBXDK
`

func (a *app) runAdmin(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("give an admin command: users, disable, enable, revoke-sessions, reset-password, grant, revoke, invites or revoke-invite")
	}
	sub, args := args[0], args[1:]
	if sub == "-h" || sub == "-help" || sub == "--help" {
		fmt.Fprint(a.stdout, strings.TrimLeft(adminUsage, "\n"))
		return nil
	}
	a.cmd = "admin " + sub
	fs := a.flags("admin "+sub, adminUsage)
	asJSON := fs.Bool("json", false, "JSON instead of text")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	needs := map[string]int{"users": 0, "invites": 0, "disable": 1, "enable": 1, "revoke-sessions": 1, "reset-password": 1,
		"grant": 1, "revoke": 1, "revoke-invite": 1}
	n, known := needs[sub]
	if !known {
		return usagef("unknown admin command %q (chat admin --help lists them)", sub)
	}
	if len(pos) != n {
		if n == 0 {
			return usagef("admin %s takes no argument", sub)
		}
		return usagef("admin %s takes one argument", sub)
	}
	var arg string
	if n == 1 {
		arg = pos[0]
		if sub != "revoke-invite" {
			arg = strings.ToLower(strings.TrimPrefix(arg, "@"))
			if err := wire.ValidateUserID(arg); err != nil {
				return usagef("%s", wire.ErrorMessage(err))
			}
		}
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	out := func(v any, text string) error {
		if *asJSON {
			return json.NewEncoder(a.stdout).Encode(v)
		}
		_, err := fmt.Fprint(a.stdout, text)
		return err
	}
	change := func(ch wire.AdminUserChange, said string) error {
		u, err := api.AdminChangeUser(ctx, arg, ch)
		if err != nil {
			return err
		}
		return out(u, fmt.Sprintf("%s %s\n", arg, said))
	}
	yes, no := true, false
	switch sub {
	case "users":
		resp, err := api.AdminUsers(ctx)
		if err != nil {
			return err
		}
		var b strings.Builder
		for _, u := range resp.Users {
			var marks []string
			for _, m := range []struct {
				on   bool
				word string
			}{{u.Admin, "admin"}, {u.Disabled, "disabled"}, {u.Online, "online"}} {
				if m.on {
					marks = append(marks, m.word)
				}
			}
			fmt.Fprintf(&b, "%-20s %-24s %-22s since %s\n", u.UserID, truncate(termtext.OneLine(u.DisplayName), 24),
				strings.Join(marks, ","), u.CreatedAt.Local().Format("2006-01-02"))
		}
		return out(resp, b.String())
	case "disable":
		return change(wire.AdminUserChange{Disabled: &yes}, "is disabled; their sessions are ended")
	case "enable":
		return change(wire.AdminUserChange{Disabled: &no}, "is enabled")
	case "grant":
		return change(wire.AdminUserChange{Admin: &yes}, "is a server admin")
	case "revoke":
		return change(wire.AdminUserChange{Admin: &no}, "is no longer a server admin")
	case "revoke-sessions":
		if err := api.AdminRevokeSessions(ctx, arg); err != nil {
			return err
		}
		return out(map[string]string{"user_id": arg}, arg+" is logged out everywhere\n")
	case "reset-password":
		code, err := api.AdminResetPassword(ctx, arg)
		if err != nil {
			return err
		}
		// Only the code on stdout, so code=$(chat admin reset-password bob)
		// captures it; what to do with it is for the person, on stderr.
		if err := out(code, code.Code+"\n"); err != nil {
			return err
		}
		if !*asJSON {
			fmt.Fprintf(a.stderr, "(give it to %s, who runs: chat reset-password %s --code %s; good until %s; their sessions are ended)\n",
				arg, arg, code.Code, code.ExpiresAt.Local().Format("2006-01-02 15:04"))
		}
		return nil
	case "invites":
		resp, err := api.AdminInvites(ctx)
		if err != nil {
			return err
		}
		var b strings.Builder
		for _, inv := range resp.Invites {
			fmt.Fprintf(&b, "%s  by %-20s until %s\n", inv.ID[:min(12, len(inv.ID))], inv.CreatedBy, inv.ExpiresAt.Local().Format("2006-01-02 15:04"))
		}
		return out(resp, b.String())
	case "revoke-invite":
		id, err := inviteID(ctx, api, arg)
		if err != nil {
			return err
		}
		if err := api.AdminRevokeInvite(ctx, id); err != nil {
			return err
		}
		return out(map[string]string{"id": id}, "invite "+id[:min(12, len(id))]+" revoked\n")
	}
	return nil
}

// inviteID is the invite whose id starts with prefix (chat admin invites
// shows the first 12 characters).
func inviteID(ctx context.Context, api *client.API, prefix string) (string, error) {
	resp, err := api.AdminInvites(ctx)
	if err != nil {
		return "", err
	}
	var hit []string
	for _, inv := range resp.Invites {
		if strings.HasPrefix(inv.ID, strings.ToLower(prefix)) {
			hit = append(hit, inv.ID)
		}
	}
	switch len(hit) {
	case 0:
		return "", wire.Errorf(wire.CodeNotFound, "no unused invite %s (chat admin invites lists them)", prefix)
	case 1:
		return hit[0], nil
	}
	return "", usagef("%d invites start with %s: give more of the id", len(hit), prefix)
}

func (a *app) runResetPassword(ctx context.Context, args []string) error {
	fs := a.flags("reset-password", resetPasswordUsage)
	code := fs.String("code", "", "the one-time `CODE` from an admin")
	c, err := a.credentials(ctx, fs, args, true)
	if err != nil {
		return err
	}
	if *code == "" {
		return usagef("give the --code an admin made (chat admin reset-password %s)", c.user)
	}
	resp, err := client.NewAPI(c.server, "", c.cfg.HTTPClient).ResetPassword(ctx,
		wire.PasswordResetRequest{UserID: c.user, Code: strings.TrimSpace(*code), Password: c.password})
	if err != nil {
		return err
	}
	return a.saveLogin(c.cfg, c.server, resp, "Password changed; logged in")
}

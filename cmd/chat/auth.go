package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

const registerUsage = `
Usage: chat register USER [--invite CODE] [--name "DISPLAY NAME"] [--password-stdin]

Creates an account on the server and logs in. The first account on a new server
becomes its admin. On a server that needs invites, pass the code an admin made
with chat invite. The password is asked on the terminal (not echoed), or read
from the first line of standard input with --password-stdin.

Examples:
  chat --server https://chat.example.com register alice
  printf '%s\n' "$PW" | chat register bob --invite 7QX2... --password-stdin
`

const loginUsage = `
Usage: chat login USER [--password-stdin]

Logs in and stores the token (mode 0600) in the home directory; the server
becomes the default for later commands.

Examples:
  chat --server https://chat.example.com login alice
  printf '%s\n' "$PW" | chat login alice --password-stdin
`

func (a *app) runRegister(ctx context.Context, args []string) error {
	fs := a.flags("register", registerUsage)
	invite := fs.String("invite", "", "invite `CODE` from an admin")
	name := fs.String("name", "", "display `name`")
	c, err := a.credentials(ctx, fs, args, true)
	if err != nil {
		return err
	}
	resp, err := client.NewAPI(c.server, "", c.cfg.HTTPClient).Register(ctx, wire.RegisterRequest{
		UserID: c.user, Password: c.password, DisplayName: *name, InviteCode: *invite})
	if err != nil {
		return err
	}
	return a.saveLogin(c.cfg, c.server, resp, "Registered and logged in")
}

func (a *app) runLogin(ctx context.Context, args []string) error {
	c, err := a.credentials(ctx, a.flags("login", loginUsage), args, false)
	if err != nil {
		return err
	}
	resp, err := client.NewAPI(c.server, "", c.cfg.HTTPClient).Login(ctx, wire.LoginRequest{UserID: c.user, Password: c.password})
	if wire.ErrorCode(err) == wire.CodeUnauthorized {
		// Here unauthorized means the password, not the token.
		return &wire.Error{Code: wire.CodeUnauthorized, Message: "wrong user or password for " + c.user}
	}
	if err != nil {
		return err
	}
	return a.saveLogin(c.cfg, c.server, resp, "Logged in")
}

// credentials is what register and login both take: the user, the server and
// the password.
type credentials struct {
	cfg                    client.Config
	server, user, password string
}

// credentials adds --password-stdin to fs, parses args and reads the
// password (twice, to confirm, when confirm is set and it is typed).
func (a *app) credentials(ctx context.Context, fs *flag.FlagSet, args []string, confirm bool) (credentials, error) {
	fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input")
	pos, err := parse(fs, args)
	if err != nil {
		return credentials{}, err
	}
	c := credentials{cfg: a.config()}
	if c.user, err = userArg(pos); err != nil {
		return credentials{}, err
	}
	if c.server, err = c.cfg.ResolveServer(); err != nil {
		return credentials{}, usagef("%v", err)
	}
	if c.password, err = a.password(ctx, *fromStdin, confirm); err != nil {
		return credentials{}, err
	}
	return c, nil
}

func (a *app) saveLogin(cfg client.Config, server string, resp wire.AuthResponse, what string) error {
	if err := cfg.SaveAccount(client.Account{Server: server, UserID: resp.UserID, Token: resp.Token, ExpiresAt: resp.ExpiresAt}); err != nil {
		return err
	}
	admin := ""
	if resp.Admin {
		admin = " (admin)"
	}
	fmt.Fprintf(a.stdout, "%s as %s%s on %s\n", what, resp.UserID, admin, server)
	return nil
}

func userArg(pos []string) (string, error) {
	if len(pos) != 1 {
		return "", usagef("give exactly one USER")
	}
	user := strings.ToLower(pos[0])
	if err := wire.ValidateUserID(user); err != nil {
		return "", usagef("%s", wire.ErrorMessage(err))
	}
	return user, nil
}

// password reads the password from standard input's first line, or asks on the
// terminal without echo; it never prompts when standard input is not a terminal.
func (a *app) password(ctx context.Context, fromStdin, confirm bool) (string, error) {
	if fromStdin {
		line, err := interruptible(ctx, func() (string, error) { return bufio.NewReader(a.stdin).ReadString('\n') })
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if err != nil {
				return "", usagef("--password-stdin: standard input is empty")
			}
			return "", usagef("--password-stdin: the first line is empty")
		}
		return line, nil
	}
	fd, ok := a.stdinTerminal()
	if !ok {
		return "", usagef("standard input is not a terminal: pipe the password and pass --password-stdin")
	}
	pw, err := a.askPassword(ctx, fd, "Password: ")
	if err != nil {
		return "", err
	}
	if len(pw) == 0 {
		return "", usagef("the password is empty")
	}
	if confirm {
		again, err := a.askPassword(ctx, fd, "Again: ")
		if err != nil {
			return "", err
		}
		if string(again) != string(pw) {
			return "", usagef("the passwords differ")
		}
	}
	return string(pw), nil
}

const logoutUsage = `
Usage: chat logout

Revokes the stored token on the server and forgets it. The cache stays (log in
again to reuse it).

Example:
  chat logout
`

func (a *app) runLogout(ctx context.Context, args []string) error {
	fs := a.flags("logout", logoutUsage)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("logout takes no arguments")
	}
	cfg := a.config()
	api, acct, err := a.login()
	if err != nil {
		return err
	}
	// A token the server no longer knows is as good as revoked; anything else
	// (the server unreachable) keeps the login so the user can retry.
	if err := api.Logout(ctx); err != nil && wire.ErrorCode(err) != wire.CodeUnauthorized {
		return fmt.Errorf("revoke the token: %w", err)
	}
	if err := cfg.RemoveAccount(acct.Server); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Logged out of %s\n", acct.Server)
	return nil
}

const whoamiUsage = `
Usage: chat whoami [--json]

Prints the logged-in user id (exit 3 when not logged in or the token is
refused), or with --json the profile and server.

Examples:
  chat whoami
  chat whoami --json | jq -r .server
`

func (a *app) runWhoami(ctx context.Context, args []string) error {
	fs := a.flags("whoami", whoamiUsage)
	asJSON := fs.Bool("json", false, "print the profile as JSON")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	api, acct, err := a.login()
	if err != nil {
		return err
	}
	p, err := api.Me(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(a.stdout).Encode(struct {
			wire.Profile
			Server string `json:"server"`
		}{p, acct.Server})
	}
	fmt.Fprintln(a.stdout, p.UserID)
	return nil
}

const inviteUsage = `
Usage: chat invite [--json]

Makes a single-use invite code, valid for 7 days (admins only). Give it to the
new user for chat register USER --invite CODE.

Example:
  chat invite
`

func (a *app) runInvite(ctx context.Context, args []string) error {
	fs := a.flags("invite", inviteUsage)
	asJSON := fs.Bool("json", false, "print code and expiry as JSON")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	inv, err := api.CreateInvite(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(a.stdout).Encode(inv)
	}
	fmt.Fprintln(a.stdout, inv.Code)
	return nil
}

// askPassword prompts on standard error and reads a line from the terminal
// without echo. Ctrl-C ends it at once (ctx's error; the command exits 130):
// the read blocks until a line comes, so it runs aside and the terminal's
// echo is turned back on here.
func (a *app) askPassword(ctx context.Context, fd uintptr, prompt string) ([]byte, error) {
	fmt.Fprint(a.stderr, prompt)
	state, stateErr := term.GetState(fd)
	read := a.readPassword
	if read == nil {
		read = term.ReadPassword
	}
	pw, err := interruptible(ctx, func() ([]byte, error) { return read(fd) })
	fmt.Fprintln(a.stderr)
	if ctx.Err() != nil {
		if stateErr == nil {
			term.Restore(fd, state)
		}
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("read password: %w", err)
	}
	return pw, nil
}

// interruptible returns what read returns, or ctx's error as soon as ctx
// ends (Ctrl-C, SIGTERM) while read still blocks: a read of a terminal or a
// pipe does not end on a signal. The read is left behind; the process is
// about to exit.
func interruptible[T any](ctx context.Context, read func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := read()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

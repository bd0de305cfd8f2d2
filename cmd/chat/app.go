package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

// Exit codes, documented in chat --help and docs/cli.md.
const (
	exitOK          = 0 // done (for send: stored)
	exitFailure     = 1 // anything else
	exitUsage       = 2 // bad flags or arguments
	exitAuth        = 3 // not logged in, or the token was refused
	exitUnknown     = 4 // unknown user or conversation
	exitRateLimited = 5 // rate limited or overloaded: the retry hint is on stderr
	// exitInterrupted is the shell's code for a command ended by SIGINT
	// (128+2), so a script's "set -e" stops as it would for any other.
	exitInterrupted = 130
)

const mainUsage = `chat: a terminal chat client.

Usage:
  chat [--server URL] [--home DIR]            open the full-screen chat
  chat COMMAND [flags] [arguments]

Commands:
  register USER         create an account and log in
  login USER            log in
  logout                log out and forget the stored token
  whoami                print who you are logged in as
  send                  send a message (from arguments, or standard input)
  react SEQ EMOJI       react to a message (the same emoji again takes it back)
  edit SEQ TEXT         edit a message of yours
  delete SEQ            delete a message for everyone
  history               print a conversation's messages
  search WORDS          search the messages cached here (chat fetch fills the cache)
  fetch                 cache a conversation's whole history (for search)
  ls                    list conversations with unread counts
  tail                  follow new messages until interrupted
  group                 create a group, add or remove members, show one
  invite                make an invite code (admins)
  admin                 users, disable, reset-password, revoke-sessions, grant, invites... (admins)
  reset-password USER   set a new password with the code an admin gave you
  media MEDIA_ID        print an attachment's download URL, or save it (-o)
  presence              who in a conversation is online, or when last seen
  profile               show or change your name, status and presence setting
  completion SHELL      a completion script for bash, zsh or fish

Run "chat COMMAND --help" for a command's flags and examples.

Configuration, first match wins:
  --server URL    CHAT_SERVER    the server; default: the server of the last login
  --home DIR      CHAT_HOME      logins and caches; default: $XDG_CONFIG_HOME/chat
                  CHAT_TOKEN     a token to use instead of the stored login
  --ca-file FILE  CHAT_CA_FILE   also trust the CA certificates in FILE (a private CA)
  --insecure      CHAT_INSECURE  do not verify the server's certificate (testing only)
chat never prompts when standard input is not a terminal: pipe passwords with
--password-stdin.

Exit codes:
  0    done; for send: every message was stored by the server
  1    anything else (network, server error, --wait timed out, a send that
       may be stored: resend with the --message-id it names)
  2    usage: bad flags or arguments, a bad --server, a message too large
  3    not logged in, or the server refused the token: run chat login USER
  4    unknown user or conversation (or not a member of it)
  5    rate limited or overloaded: the retry hint is on stderr
  130  interrupted (Ctrl-C) before it finished

Examples:
  chat --server https://chat.example.com login alice
  echo "build passed" | chat send --to bob
  chat send --group g:ab12 --lines < notes.txt
  chat tail --json | jq .content
`

// app is one run of the program; its streams and environment are injected so
// tests can run it in-process.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	cmd    string // for messages: "send", "group add"
	server string // --server
	home   string // --home

	tls tlsOptions // --ca-file, --insecure (tls.go)

	// Tests replace these: a terminal cannot be had in a test run.
	stdinTTY     func() (fd uintptr, ok bool)     // nil: stdin's own
	readPassword func(fd uintptr) ([]byte, error) // nil: term.ReadPassword
	stdoutTTY    func() (width int, ok bool)      // nil: stdout's own (format.go)
}

type command struct {
	name    string
	summary string
	run     func(a *app, ctx context.Context, args []string) error
}

var commands []command

func init() {
	// Assigned in init: the commands refer to the table through runGroup.
	commands = []command{
		{"register", "create an account and log in", (*app).runRegister},
		{"login", "log in", (*app).runLogin},
		{"logout", "log out", (*app).runLogout},
		{"whoami", "print the logged-in user", (*app).runWhoami},
		{"send", "send messages", (*app).runSend},
		{"react", "react to a message", (*app).runReact},
		{"edit", "edit a message of yours", (*app).runEdit},
		{"delete", "delete a message for everyone", (*app).runDelete},
		{"history", "print a conversation", (*app).runHistory},
		{"search", "search the cached messages", (*app).runSearch},
		{"fetch", "cache a conversation's whole history", (*app).runFetch},
		{"ls", "list conversations", (*app).runLs},
		{"tail", "follow new messages", (*app).runTail},
		{"mentions", "messages that mention you", (*app).runMentions},
		{"group", "manage groups", (*app).runGroup},
		{"channels", "list the public channels", (*app).runChannels},
		{"channel", "create, join or leave a public channel", (*app).runChannel},
		{"invite", "make an invite code", (*app).runInvite},
		{"admin", "administer the server (admins)", (*app).runAdmin},
		{"reset-password", "set a new password with an admin's code", (*app).runResetPassword},
		{"media", "fetch an attachment", (*app).runMedia},
		{"presence", "who is online in a conversation", (*app).runPresence},
		{"profile", "show or change your profile and settings", (*app).runProfile},
		{"completion", "a shell completion script", (*app).runCompletion},
	}
}

func (a *app) main(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&a.server, "server", "", "server URL")
	fs.StringVar(&a.home, "home", "", "home directory")
	a.tlsFlags(fs)
	if err := a.tlsFromEnv(); err != nil {
		return a.fail(err)
	}
	if err := a.timerSlackFromEnv(); err != nil {
		return a.fail(err)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(a.stdout, mainUsage)
			return exitOK
		}
		return a.fail(usagef("%v", err))
	}
	if err := a.buildTLS(); err != nil {
		return a.fail(usagef("--ca-file or CHAT_CA_FILE: %v", err))
	}
	args = fs.Args()
	if len(args) == 0 {
		a.cmd = ""
		if err := checkServer(a.config()); err != nil {
			return a.fail(err)
		}
		if err := runTUI(ctx, a.config()); err != nil {
			return a.fail(err)
		}
		return exitOK
	}
	if args[0] == "__complete" { // for the completion scripts; not in the usage
		if err := a.runComplete(ctx, args[1:]); err != nil {
			return a.fail(err)
		}
		return exitOK
	}
	if args[0] == "help" {
		if len(args) > 1 {
			args = []string{args[1], "--help"}
		} else {
			fmt.Fprint(a.stdout, mainUsage)
			return exitOK
		}
	}
	for _, c := range commands {
		if c.name == args[0] {
			a.cmd = c.name
			err := c.run(a, ctx, args[1:])
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			if err != nil {
				return a.fail(err)
			}
			return exitOK
		}
	}
	return a.fail(usagef("unknown command %q; run chat --help for the list", args[0]))
}

// config applies flags over the environment.
func (a *app) config() client.Config {
	cfg := client.ConfigFromEnv(a.getenv)
	a.applyTLS(&cfg)
	if a.server != "" {
		cfg.Server = a.server
	}
	if a.home != "" {
		cfg.Home = a.home
	}
	return cfg
}

// usageError is a mistake in the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// unknownTarget marks a refusal that, for the command at hand, means "no such
// conversation for you" (the server answers forbidden to a non-member): exit 4.
type unknownTarget struct{ err error }

func (e *unknownTarget) Error() string { return e.err.Error() }
func (e *unknownTarget) Unwrap() error { return e.err }

// asTarget turns a forbidden answer into unknownTarget, for commands that name
// a conversation.
func asTarget(err error) error {
	if wire.ErrorCode(err) == wire.CodeForbidden {
		return &unknownTarget{err}
	}
	return err
}

func exitCode(err error) int {
	var ue *usageError
	var ut *unknownTarget
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, new(*maybeStored)):
		return exitFailure
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, client.ErrNotLoggedIn):
		return exitAuth
	case errors.As(err, &ut):
		return exitUnknown
	}
	var we *wire.Error
	if errors.As(err, &we) {
		switch we.Code {
		case wire.CodeUnauthorized, wire.CodeAccountDisabled:
			return exitAuth
		case wire.CodeNotFound:
			return exitUnknown
		case wire.CodeInvalid, wire.CodeTooLarge, wire.CodeMentionAllAdminsOnly:
			// The server refused an argument (a too-short password, a bad
			// name, a message over its size limit, which only it knows, an
			// @all the group keeps for its admins): the command line was
			// wrong, as with a bad flag, and the same one again would be too.
			return exitUsage
		case wire.CodeRateLimited, wire.CodeOverloaded:
			return exitRateLimited
		}
	}
	return exitFailure
}

// fail prints err as one line that says what to do, and returns its exit code.
func (a *app) fail(err error) int {
	prefix := "chat"
	if a.cmd != "" {
		prefix += " " + a.cmd
	}
	fmt.Fprintf(a.stderr, "%s: %s\n", prefix, termtext.OneLine(a.describe(err)))
	return exitCode(err)
}

func (a *app) describe(err error) string {
	var ue *usageError
	if errors.As(err, &ue) {
		help := "chat --help"
		if a.cmd != "" {
			help = "chat " + a.cmd + " --help"
		}
		return ue.msg + " (see " + help + ")"
	}
	var ms *maybeStored
	if errors.As(err, &ms) {
		return ms.msg
	}
	if errors.Is(err, context.Canceled) {
		return "interrupted"
	}
	var we *wire.Error
	if errors.As(err, &we) {
		switch we.Code {
		case wire.CodeUnauthorized:
			if a.cmd == "login" || a.cmd == "register" || a.cmd == "reset-password" {
				return we.Message // the password or code was refused, not a token
			}
			return "the server refused the login (" + we.Message + "): run chat login USER, or check CHAT_TOKEN"
		case wire.CodeAccountDisabled:
			return "account disabled: ask your server's admin"
		case wire.CodeRateLimited, wire.CodeOverloaded:
			after := we.RetryAfter()
			if after <= 0 {
				after = time.Second
			}
			return fmt.Sprintf("%s (%s): retry after %s", we.Message, we.Code, after.Round(time.Millisecond))
		case wire.CodeInternal, wire.CodeUnavailable, wire.CodeMaybeStored:
			return fmt.Sprintf("the server failed (%s: %s): try again later", we.Code, we.Message)
		}
		return we.Message
	}
	if hint, ok := certHint(err); ok {
		return hint
	}
	if client.IsNetError(err) {
		return err.Error() + ": check --server or CHAT_SERVER, and that the server is running"
	}
	return err.Error()
}

// flags makes a subcommand's flag set, with --server and --home accepted there
// too, and a --help that prints usage (the command's text, then its flags).
func (a *app) flags(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("chat "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&a.server, "server", a.server, "server `URL` (CHAT_SERVER)")
	fs.StringVar(&a.home, "home", a.home, "home `DIR` for logins and caches (CHAT_HOME)")
	a.tlsFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(a.stdout, strings.TrimLeft(usage, "\n"))
		fmt.Fprintln(a.stdout, "\nFlags:")
		fs.SetOutput(a.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parse parses flags and positional arguments in any order ("group create NAME
// --members a,b"); "--" ends the flags. A bad flag is a usage error; --help
// prints the usage and returns flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	// The flag package prints the usage on every error; we print it only for
	// --help, and a mistake gets one line.
	usage := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = usage }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return nil, flag.ErrHelp
			}
			return nil, usagef("%v", err)
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseFlagsOnly is parse for a command that takes no positional argument.
func parseFlagsOnly(fs *flag.FlagSet, args []string) error {
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	return nil
}

// stdinTerminal returns standard input's descriptor when it is a terminal.
func (a *app) stdinTerminal() (uintptr, bool) {
	if a.stdinTTY != nil {
		return a.stdinTTY()
	}
	f, ok := a.stdin.(*os.File)
	if !ok {
		return 0, false
	}
	return f.Fd(), term.IsTerminal(f.Fd())
}

// stderrTerminal says whether standard error is a terminal (progress that
// rewrites its line goes only there).
func (a *app) stderrTerminal() bool {
	f, ok := a.stderr.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// login loads the stored login and returns an API client for it.
func (a *app) login() (*client.API, client.Account, error) {
	cfg := a.config()
	if err := checkServer(cfg); err != nil {
		return nil, client.Account{}, err
	}
	acct, err := cfg.LoadAccount()
	if errors.Is(err, client.ErrNoServer) {
		return nil, client.Account{}, fmt.Errorf("%w: no server given and none logged in to: run chat --server URL login USER", client.ErrNotLoggedIn)
	}
	if err != nil {
		return nil, client.Account{}, err
	}
	return client.NewAPI(acct.Server, acct.Token, cfg.HTTPClient), acct, nil
}

// checkServer refuses a --server or CHAT_SERVER that is not a server URL: a
// mistake in the command line (exit 2), like a bad flag, found before any
// request.
func checkServer(cfg client.Config) error {
	if cfg.Server == "" {
		return nil
	}
	if _, err := client.NormalizeServer(cfg.Server); err != nil {
		return usagef("--server or CHAT_SERVER: %v", err)
	}
	return nil
}

// self returns the logged-in user id, asking the server when only a token is
// known (CHAT_TOKEN); that read is retried through an outage like a send
// (client.Retry), for as long as ctx allows.
func self(ctx context.Context, api *client.API, acct client.Account) (string, error) {
	if acct.UserID != "" {
		return acct.UserID, nil
	}
	var p wire.Profile
	err := client.Retry(ctx, func(ctx context.Context) error {
		var err error
		p, err = api.Me(ctx)
		return err
	})
	if err != nil {
		return "", err
	}
	return p.UserID, nil
}

// target resolves --to USER (--with USER: userFlag names the command's flag)
// or --group ID to a conversation id. A direct conversation's id is derived
// locally, so no request is spent on it: the server creates it with the first
// message.
func target(ctx context.Context, api *client.API, acct client.Account, userFlag, to, group string, required bool) (string, error) {
	switch {
	case to != "" && group != "":
		return "", usagef("give %s USER or --group ID, not both", userFlag)
	case to != "":
		to = strings.ToLower(strings.TrimPrefix(to, "@"))
		if err := wire.ValidateUserID(to); err != nil {
			return "", usagef("%s: %s", userFlag, wire.ErrorMessage(err))
		}
		me, err := self(ctx, api, acct)
		if err != nil {
			return "", err
		}
		// to == me is allowed: the direct conversation with yourself is your
		// note to self.
		return wire.DirectConversationID(me, to), nil
	case group != "":
		if err := wire.ValidateConversationID(group); err != nil {
			return "", usagef("--group: %s", wire.ErrorMessage(err))
		}
		return group, nil
	case required:
		return "", usagef("give %s USER or --group ID", userFlag)
	}
	return "", nil
}

// peerTarget is asTarget for a command that read a direct conversation named
// by --with USER: the server refuses a conversation we are not in, and a
// direct one with nobody is one, so when USER does not exist the error says
// that instead (as chat send --to does).
func peerTarget(ctx context.Context, api *client.API, peer string, err error) error {
	if c := wire.ErrorCode(err); peer != "" && (c == wire.CodeForbidden || c == wire.CodeNotFound) {
		if missing := userMissing(ctx, api, peer); missing != nil {
			return missing
		}
	}
	return asTarget(err)
}

// userMissing is the server's "no user" answer for peer, or nil when the
// user exists (or the server cannot say now).
func userMissing(ctx context.Context, api *client.API, peer string) error {
	peer = strings.ToLower(strings.TrimPrefix(peer, "@"))
	if _, err := api.User(ctx, peer); wire.ErrorCode(err) == wire.CodeNotFound {
		return err
	}
	return nil
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
)

const completionUsage = `
Usage: chat completion bash|zsh|fish

Prints a script that completes chat's commands, subcommands and flags in
that shell. The script asks chat itself (a hidden "chat __complete"), so it
stays right as chat changes.

Examples:
  chat completion bash > ~/.local/share/bash-completion/completions/chat
  chat completion zsh > "${fpath[1]}/_chat"
  chat completion fish > ~/.config/fish/completions/chat.fish
`

var completionScripts = map[string]string{
	"bash": `# bash completion for chat (chat completion bash)
_chat() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	COMPREPLY=($(compgen -W "$(chat __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)" -- "$cur"))
}
complete -o default -F _chat chat
`,
	"zsh": `#compdef chat
# zsh completion for chat (chat completion zsh)
_chat() {
	local -a words_before
	words_before=(${words[2,CURRENT-1]})
	compadd -- $(chat __complete "${words_before[@]}" 2>/dev/null)
}
compdef _chat chat
`,
	"fish": `# fish completion for chat (chat completion fish)
complete -c chat -f -a '(chat __complete (commandline -opc)[2..-1] 2>/dev/null)'
`,
}

// subcommands of the commands that have them.
var subcommands = map[string][]string{
	"group":      {"create", "add", "remove", "show", "rename", "topic", "admin"},
	"channel":    {"create", "join", "leave"},
	"admin":      {"users", "disable", "enable", "revoke-sessions", "reset-password", "grant", "revoke", "invites", "revoke-invite"},
	"completion": {"bash", "zsh", "fish"},
}

func (a *app) runCompletion(_ context.Context, args []string) error {
	fs := a.flags("completion", completionUsage)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || completionScripts[pos[0]] == "" {
		return usagef("give one shell: bash, zsh or fish")
	}
	_, err = fmt.Fprint(a.stdout, completionScripts[pos[0]])
	return err
}

// flagLine is a flag as PrintDefaults writes it: "  -name" at a line start.
var flagLine = regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)

// runComplete prints what may follow the words typed so far, one per line:
// commands first, then a command's subcommands and its flags (read from its
// own --help, so they never drift from what it takes).
func (a *app) runComplete(ctx context.Context, words []string) error {
	var cmd string
	for _, w := range words {
		if !strings.HasPrefix(w, "-") {
			cmd = w
			break
		}
	}
	var out []string
	if cmd == "" {
		for _, c := range commands {
			out = append(out, c.name)
		}
		out = append(out, "help")
	} else {
		if len(words) == 1 {
			out = append(out, subcommands[cmd]...)
		}
		var buf bytes.Buffer
		help := &app{stdin: strings.NewReader(""), stdout: &buf, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
		helpArgs := []string{cmd, "--help"}
		if subs := subcommands[cmd]; len(subs) > 0 && len(words) > 1 && cmd != "completion" {
			helpArgs = []string{cmd, words[1], "--help"}
		}
		help.main(ctx, helpArgs)
		for _, m := range flagLine.FindAllStringSubmatch(buf.String(), -1) {
			out = append(out, "--"+m[1])
		}
	}
	_, err := fmt.Fprintln(a.stdout, strings.Join(out, "\n"))
	return err
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The bash script, sourced in a real bash with chat on the PATH, completes
// commands, subcommands and a command's flags (read from its --help).
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	complete := func(words ...string) []string {
		t.Helper()
		script := `source <(chat completion bash)
COMP_WORDS=(` + strings.Join(words, " ") + `); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _chat; echo "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, "-c", script)
		cmd.Env = []string{"PATH=" + filepath.Dir(chatBin) + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.Fields(string(out))
	}
	if got := complete("chat", "se"); strings.Join(got, " ") != "send search" {
		t.Errorf("chat se<TAB>: %q", got)
	}
	if got := complete("chat", "send", "--re"); strings.Join(got, " ") != "--reply-to" {
		t.Errorf("chat send --re<TAB>: %q", got)
	}
	if got := complete("chat", "admin", "re"); strings.Join(got, " ") != "revoke-sessions reset-password revoke revoke-invite" {
		t.Errorf("chat admin re<TAB>: %q", got)
	}
	if got := complete("chat", "group", "create", "--m"); strings.Join(got, " ") != "--members" {
		t.Errorf("chat group create --m<TAB>: %q", got)
	}
}

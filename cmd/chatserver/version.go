package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/sqlite"
)

// version is the release, set when building one:
// go build -ldflags "-X main.version=1.4.0" ./cmd/chatserver
var version = "dev"

// versionFlag adds --version to fs. The returned func, called after
// fs.Parse, says whether --version or the command "version" was given.
func versionFlag(fs *flag.FlagSet) (asked func() bool) {
	v := fs.Bool("version", false, "print the version and the schema versions of the stores, then exit (also: chatserver version)")
	return func() bool { return *v || (fs.NArg() == 1 && fs.Arg(0) == "version") }
}

// versionText says which build this is and which store layouts it expects:
// what to compare before pointing a new build at an old data directory or
// tables.
func versionText() string {
	var b strings.Builder
	v := version
	info, ok := debug.ReadBuildInfo()
	if ok && v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version // go install github.com/chatterm/chat/cmd/chatserver@v1.4.0
	}
	fmt.Fprintf(&b, "chatserver %s\n", v)
	if ok {
		var rev, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = " (modified)"
				}
			}
		}
		if rev != "" {
			fmt.Fprintf(&b, "revision %s%s\n", rev, modified)
		}
		fmt.Fprintf(&b, "go %s\n", strings.TrimPrefix(info.GoVersion, "go"))
	}
	fmt.Fprintf(&b, "sqlite schema %d\n", sqlite.SchemaVersion())
	fmt.Fprintf(&b, "dynamodb schema %d\n", dynamo.SchemaVersion)
	return b.String()
}

// stdout is where --version prints.
func (m *Main) stdout() io.Writer {
	if m.Stdout == nil {
		return os.Stdout
	}
	return m.Stdout
}

// Command tuiburst sends N messages from the account logged in under
// CHAT_HOME to a conversation as fast as the server stores them (32 in
// flight), for scripts/tui-burst.sh to measure what a burst costs the real
// chat TUI on the other side.
//
// Usage: CHAT_HOME=DIR tuiburst CONVERSATION_ID N
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

func main() {
	ctx := context.Background()
	cfg := client.Config{Home: os.Getenv("CHAT_HOME")}
	acct, err := cfg.LoadAccount()
	if err != nil {
		panic(err)
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: CHAT_HOME=DIR tuiburst CONVERSATION_ID N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		panic(err)
	}
	conv := os.Args[1]
	c, err := client.Dial(ctx, acct.Server, acct.Token, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	const window = 32
	sent, acked := 0, 0
	for acked < n {
		for sent < n && sent-acked < window {
			sent++
			f := wire.Frame{Type: wire.TypeSend, ID: fmt.Sprint(sent), ConversationID: conv,
				MessageID: fmt.Sprintf("burst-%d-%d", os.Getpid(), sent), Content: fmt.Sprintf("burst message %d, about as long as people type", sent), FirstTry: true}
			if err := c.Write(ctx, f); err != nil {
				panic(err)
			}
		}
		f, err := c.Read(ctx)
		if err != nil {
			panic(err)
		}
		switch f.Type {
		case wire.TypeSent:
			acked++
		case wire.TypeError:
			panic(fmt.Sprintf("%+v", f))
		}
	}
}

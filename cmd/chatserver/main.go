// Command chatserver is the self-hostable chat server. With no flags it serves on
// 127.0.0.1:8080 with the embedded backend (SQLite and in-process state under
// ./data); flags or CHATSERVER_* variables select DynamoDB, Redis and S3.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if code, ok := runTool(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv); ok {
		stop()
		os.Exit(code) // backup, restore (backup.go), rotate-store-id (storeid.go)
	}
	m := NewMain(os.Stderr)
	if err := m.ParseFlags(os.Args[1:], os.Getenv); err != nil {
		if err == errHelp {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "chatserver:", err)
		os.Exit(2)
	}
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "chatserver:", err)
		os.Exit(1)
	}
	stopProcs := m.AdaptProcs()
	defer stopProcs()
	select {
	case <-ctx.Done():
	case err := <-m.Done():
		fmt.Fprintln(os.Stderr, "chatserver: serve:", err)
	}
	stop()
	if err := m.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "chatserver: shutdown:", err)
		os.Exit(1)
	}
}

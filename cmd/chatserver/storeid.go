package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/chatterm/chat/internal/dirlock"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/sqlite"
)

const rotateUsage = `Usage: chatserver rotate-store-id [--data-dir DIR | --dynamodb-region R [--dynamodb-endpoint URL] [--table-prefix P]]

Gives the store a new store id, and prints it. Run it after rolling the store
back by other means than chatserver restore (which does it itself): a
DynamoDB point-in-time restore, a copy of the data directory put back. Every
client then reconciles its cache with the store when it reconnects: what the
store no longer has leaves the cache, and the user's own lost messages are
sent again (docs/self-hosting.md, "Restores and clients").

With --data-dir the chatserver serving it must be stopped; with DynamoDB,
restart every node afterwards (a node reads the id when it starts).
`

func runRotateStoreID(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("chatserver rotate-store-id", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	dataDir := fs.String("data-dir", env("CHATSERVER_DATA_DIR", "data"), "the data directory (embedded backend)")
	region := fs.String("dynamodb-region", env("CHATSERVER_DYNAMODB_REGION", ""), "AWS region of DynamoDB; setting it selects DynamoDB")
	endpoint := fs.String("dynamodb-endpoint", env("CHATSERVER_DYNAMODB_ENDPOINT", ""), "DynamoDB endpoint URL")
	prefix := fs.String("table-prefix", env("CHATSERVER_TABLE_PREFIX", "chat_"), "prefix of every DynamoDB table name")
	fs.Usage = func() { fmt.Fprint(stderr, rotateUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.Usage()
			return err
		}
		return &usageError{err.Error()}
	}
	if fs.NArg() != 0 {
		return &usageError{"takes no arguments (see chatserver rotate-store-id --help)"}
	}

	if *region != "" || *endpoint != "" {
		st, err := dynamo.Open(ctx, dynamo.Options{TablePrefix: *prefix, Region: *region, Endpoint: *endpoint})
		if err != nil {
			return fmt.Errorf("dynamodb: %w", err)
		}
		defer st.Close()
		id, err := st.RotateStoreID(ctx)
		if err != nil {
			return fmt.Errorf("dynamodb tables %s*: %w", *prefix, err)
		}
		fmt.Fprintln(stdout, id)
		fmt.Fprintf(stderr, "chatserver rotate-store-id: the tables %s* have the store id %s; restart every node\n", *prefix, id)
		return nil
	}

	db := filepath.Join(*dataDir, "chat.db")
	if _, err := os.Stat(db); err != nil {
		return &usageError{fmt.Sprintf("--data-dir %s holds no database (%v)", *dataDir, err)}
	}
	lock, err := dirlock.Acquire(*dataDir)
	if errors.Is(err, dirlock.ErrHeld) {
		return fmt.Errorf("--data-dir %s is in use by a chatserver: stop it first (a node reads the store id when it starts)", *dataDir)
	}
	if err != nil {
		return err
	}
	defer lock.Close()
	id, err := sqlite.RotateStoreIDAt(ctx, db)
	if err != nil {
		return err
	}
	if id == "" {
		fmt.Fprintf(stderr, "chatserver rotate-store-id: %s is from before store ids; it gets a new one when a chatserver first starts on it\n", db)
		return nil
	}
	fmt.Fprintln(stdout, id)
	fmt.Fprintf(stderr, "chatserver rotate-store-id: %s has the store id %s\n", db, id)
	return nil
}

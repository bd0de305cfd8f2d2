package main

import (
	"context"
	"fmt"
	"os"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

const mediaUsage = `
Usage: chat media MEDIA_ID [-o FILE]

Prints a short-lived download URL for a message's attachment (the
"attachment" field of chat history --json), or with -o saves the file.

Examples:
  chat media media/alice/k3v9q2x8w4m7p1zr0abc
  chat history --with bob --json | jq -r 'select(.attachment) | .attachment' | head -1 | xargs chat media -o latest.bin
`

func (a *app) runMedia(ctx context.Context, args []string) error {
	fs := a.flags("media", mediaUsage)
	out := fs.String("o", "", "save the file as `FILE` instead of printing its URL")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give one MEDIA_ID")
	}
	if err := wire.ValidateMediaID(pos[0]); err != nil {
		return usagef("%s", wire.ErrorMessage(err))
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	if *out == "" {
		url, err := api.MediaURL(ctx, pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, termtext.OneLine(url))
		return nil
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := api.DownloadMedia(ctx, pos[0], f); err != nil {
		f.Close()
		os.Remove(*out)
		return err
	}
	return f.Close()
}

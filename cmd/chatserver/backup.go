package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/chatterm/chat/internal/dirlock"
	"github.com/chatterm/chat/server/sqlite"
)

// Backup and restore of the embedded backend's data directory
// (docs/self-hosting.md, "Backups"). A backup is a gzipped tar of a manifest,
// a consistent snapshot of the SQLite database taken while the server runs,
// and the blobs (media, archived messages). Blobs are written once and never
// changed, and are copied after the snapshot, so every blob the snapshot
// refers to is in the backup (newer ones too, harmlessly).

// backupFormat is the version of the archive's layout.
const backupFormat = 1

type manifest struct {
	Format  int       `json:"format"`
	Created time.Time `json:"created"`
	Schema  int       `json:"sqlite_schema"`
	Blobs   int       `json:"blobs"`
}

// usageError is a command line the subcommand cannot run (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

const backupUsage = `Usage: chatserver backup [--data-dir DIR] FILE

Writes a consistent backup of the embedded backend's data directory to FILE
(a .tar.gz; - for standard output), while a chatserver serves from DIR: the
database as of the moment the backup starts, and the blobs. Restore it with
chatserver restore.
`

const restoreUsage = `Usage: chatserver restore [--data-dir DIR] [--force] FILE

Restores a backup made by chatserver backup into DIR, which must be empty (or
--force to replace what is there) and not in use by a chatserver. The backup
is checked (its manifest, the database's integrity) before anything in DIR
changes. The restored store gets a new store id, so that clients reconcile
their caches with it.
`

// runTool runs a subcommand other than serving; ok is false when args[0]
// names none. The exit code is 0, 1 (failure) or 2 (usage).
func runTool(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	var err error
	switch args[0] {
	case "backup":
		err = runBackup(ctx, args[1:], stdout, stderr, getenv)
	case "restore":
		err = runRestore(ctx, args[1:], stderr, getenv)
	case "rotate-store-id":
		err = runRotateStoreID(ctx, args[1:], stdout, stderr, getenv)
	default:
		return 0, false
	}
	var ue *usageError
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		return 0, true
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "chatserver %s: %s\n", args[0], ue.msg)
		return 2, true
	}
	fmt.Fprintf(stderr, "chatserver %s: %v\n", args[0], err)
	return 1, true
}

// toolFlags parses a subcommand's flags: --data-dir (CHATSERVER_DATA_DIR,
// default data) and one FILE.
func toolFlags(name, usage string, args []string, stderr io.Writer, getenv func(string) string, extra func(*flag.FlagSet)) (dataDir, file string, err error) {
	fs := flag.NewFlagSet("chatserver "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	def := getenv("CHATSERVER_DATA_DIR")
	if def == "" {
		def = "data"
	}
	fs.StringVar(&dataDir, "data-dir", def, "the data directory")
	if extra != nil {
		extra(fs)
	}
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.Usage()
			return "", "", err
		}
		return "", "", &usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return "", "", &usageError{"give exactly one FILE (see chatserver " + name + " --help)"}
	}
	return dataDir, fs.Arg(0), nil
}

func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	dataDir, file, err := toolFlags("backup", backupUsage, args, stderr, getenv, nil)
	if err != nil {
		return err
	}
	db := filepath.Join(dataDir, "chat.db")
	if _, err := os.Stat(db); err != nil {
		return &usageError{fmt.Sprintf("--data-dir %s holds no database (%v)", dataDir, err)}
	}
	// The backup runs beside the server it copies: at a lower priority, it
	// takes the CPU the server leaves (snapshot, compression) instead of
	// sharing it evenly with the send path. Best effort.
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, 10)
	tmp, err := os.MkdirTemp("", "chatserver-backup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	snap := filepath.Join(tmp, "chat.db")
	if err := sqlite.Snapshot(ctx, db, snap); err != nil {
		return err
	}
	schema, err := sqlite.Check(ctx, snap)
	if err != nil {
		return err
	}

	var out io.Writer = stdout
	var f *os.File
	if file != "-" {
		// Written beside its final name and renamed when whole: a backup
		// interrupted halfway never looks like a good one.
		f, err = os.CreateTemp(filepath.Dir(file), ".chatserver-backup-*")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		out = f
	}
	gz := gzip.NewWriter(out)
	tw := tar.NewWriter(gz)
	blobs, err := writeBackup(tw, snap, filepath.Join(dataDir, "blobs"), schema)
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if f != nil {
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), file)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if file != "-" {
		fmt.Fprintf(stderr, "chatserver backup: %s: the database (schema %d) and %d blobs\n", file, schema, blobs)
	}
	return nil
}

// writeBackup writes the manifest, the snapshot and the blob tree.
func writeBackup(tw *tar.Writer, snap, blobDir string, schema int) (int, error) {
	var blobFiles []string
	err := filepath.WalkDir(blobDir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == blobDir {
			return filepath.SkipDir // no blobs yet
		}
		if err != nil || d.IsDir() {
			return err
		}
		blobFiles = append(blobFiles, p)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("list blobs: %w", err)
	}
	m, _ := json.Marshal(manifest{Format: backupFormat, Created: time.Now().UTC(), Schema: schema, Blobs: len(blobFiles)})
	if err := tw.WriteHeader(&tar.Header{Name: "manifest.json", Mode: 0o600, Size: int64(len(m)), ModTime: time.Now()}); err != nil {
		return 0, err
	}
	if _, err := tw.Write(m); err != nil {
		return 0, err
	}
	if err := addFile(tw, snap, "chat.db"); err != nil {
		return 0, err
	}
	for _, p := range blobFiles {
		rel, err := filepath.Rel(blobDir, p)
		if err != nil {
			return 0, err
		}
		if err := addFile(tw, p, "blobs/"+filepath.ToSlash(rel)); err != nil {
			return 0, err
		}
	}
	return len(blobFiles), nil
}

func addFile(tw *tar.Writer, path, name string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: st.Size(), ModTime: st.ModTime()}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

func runRestore(ctx context.Context, args []string, stderr io.Writer, getenv func(string) string) error {
	var force bool
	dataDir, file, err := toolFlags("restore", restoreUsage, args, stderr, getenv, func(fs *flag.FlagSet) {
		fs.BoolVar(&force, "force", false, "replace what the data directory holds")
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return err
	}
	lock, err := dirlock.Acquire(dataDir)
	if errors.Is(err, dirlock.ErrHeld) {
		return fmt.Errorf("--data-dir %s is in use by a chatserver: stop it before restoring into it", dataDir)
	}
	if err != nil {
		return err
	}
	defer lock.Close()
	if !force {
		for _, name := range []string{"chat.db", "blobs"} {
			if _, err := os.Stat(filepath.Join(dataDir, name)); err == nil {
				return &usageError{fmt.Sprintf("--data-dir %s already holds %s: restore into an empty directory, or pass --force to replace it", dataDir, name)}
			}
		}
	}

	// Unpacked beside the data and checked whole before anything moves.
	staging, err := os.MkdirTemp(dataDir, ".restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(staging)
	m, err := unpack(file, staging)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	schema, err := sqlite.Check(ctx, filepath.Join(staging, "chat.db"))
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if schema != m.Schema || schema > sqlite.SchemaVersion() {
		return fmt.Errorf("%s: the database is at schema %d (manifest: %d); this chatserver knows up to %d", file, schema, m.Schema, sqlite.SchemaVersion())
	}

	// The restored store is not the one clients last saw: it lacks what was
	// stored after the backup, and will number new messages from there. A
	// new identity tells every client to reconcile its cache (a database
	// from before identities gets a new one on its first start).
	storeID, err := sqlite.RotateStoreIDAt(ctx, filepath.Join(staging, "chat.db"))
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := swapIn(dataDir, staging); err != nil {
		return err
	}
	idNote := "a new store id " + storeID
	if storeID == "" {
		idNote = "a new store id on its first start"
	}
	fmt.Fprintf(stderr, "chatserver restore: %s into %s: the database (schema %d, backed up %s, %s) and %d blobs\n",
		file, dataDir, schema, m.Created.Format(time.RFC3339), idNote, m.Blobs)
	return nil
}

// swapIn puts the restored database and blobs from staging into dataDir.
// What dataDir held (with --force) is moved aside first, into staging, and
// put back if a move fails, so a failed restore loses nothing; it goes with
// staging once the new files are in place.
func swapIn(dataDir, staging string) (err error) {
	old := filepath.Join(staging, "replaced")
	if err := os.Mkdir(old, 0o750); err != nil {
		return err
	}
	var moved []string
	defer func() {
		if err == nil {
			return
		}
		for _, name := range moved { // back as they were
			os.RemoveAll(filepath.Join(dataDir, name))
			os.Rename(filepath.Join(old, name), filepath.Join(dataDir, name))
		}
	}()
	for _, name := range []string{"chat.db-wal", "chat.db-shm", "chat.db", "blobs"} {
		err := os.Rename(filepath.Join(dataDir, name), filepath.Join(old, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("move %s aside: %w", name, err)
		}
		moved = append(moved, name)
	}
	for _, name := range []string{"chat.db", "blobs"} {
		err := os.Rename(filepath.Join(staging, name), filepath.Join(dataDir, name))
		if errors.Is(err, fs.ErrNotExist) && name == "blobs" {
			continue // a backup of a server that had no blobs yet
		}
		if err != nil {
			return fmt.Errorf("put the restored %s in place: %w", name, err)
		}
	}
	return nil
}

// unpack extracts a backup into dir, refusing anything but its own layout
// (a manifest, chat.db, files under blobs/) and paths that leave dir.
func unpack(file, dir string) (manifest, error) {
	var m manifest
	var in io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return m, err
		}
		defer f.Close()
		in = f
	}
	gz, err := gzip.NewReader(in)
	if err != nil {
		return m, fmt.Errorf("not a chatserver backup (gzip: %w)", err)
	}
	tr := tar.NewReader(gz)
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return m, fmt.Errorf("not a chatserver backup (tar: %w)", err)
		}
		name := filepath.FromSlash(h.Name)
		if h.Typeflag != tar.TypeReg || !filepath.IsLocal(name) ||
			!(name == "manifest.json" || name == "chat.db" || strings.HasPrefix(name, "blobs"+string(filepath.Separator))) {
			return m, fmt.Errorf("unexpected entry %q: not a chatserver backup", h.Name)
		}
		if name == "manifest.json" {
			if err := json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&m); err != nil {
				return m, fmt.Errorf("manifest: %w", err)
			}
			seen[name] = true
			continue
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
			return m, err
		}
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
		if err != nil {
			return m, err
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return m, err
		}
		seen[name] = true
	}
	switch {
	case !seen["manifest.json"]:
		return m, errors.New("no manifest: not a chatserver backup")
	case m.Format != backupFormat:
		return m, fmt.Errorf("backup format %d; this chatserver reads %d", m.Format, backupFormat)
	case !seen["chat.db"]:
		return m, errors.New("the backup holds no database")
	}
	return m, nil
}

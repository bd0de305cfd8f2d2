package sqlite

/*
#include <stdlib.h>

int chat_walbuf_register(const char *name);
long long chat_walbuf_writes(void);
*/
import "C"

import (
	"fmt"
	"sync"
)

// walBufVFS names the VFS of walbuf_linux.c, which hands a commit's WAL frames
// to the system in writes of up to 128 KiB instead of two per page. A commit of
// 280 pages made 560 pwrite calls: 0.72 ms of the writer's time on this
// machine, against 0.03 ms for one pwrite of the same bytes (a scratch Go
// program timing 2,000 rounds of each into a file in the page cache), and the
// writer goroutine is the server's bottleneck under load. In chatbench
// throughput the server's write calls fell from 138,000 to 33,000 a second, and
// throughput rose 5–9% in three alternated pairs (docs/benchmarks.md). The
// writer's connection opens with it; readers, which write no WAL, keep SQLite's
// default.
const walBufVFS = "chat-walbuf"

var registerWALBuf = sync.OnceValue(func() error {
	name := C.CString(walBufVFS) // kept for the life of the process, as SQLite keeps the VFS
	if rc := C.chat_walbuf_register(name); rc != 0 {
		return fmt.Errorf("register the %s VFS: SQLite error %d", walBufVFS, int(rc))
	}
	return nil
})

// walWrites counts the writes walbuf_linux.c has handed to the default VFS for
// WAL files, in this process (for tests).
func walWrites() int64 { return int64(C.chat_walbuf_writes()) }

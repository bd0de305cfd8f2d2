// A VFS that forwards everything to SQLite's default one, except that writes
// to a write-ahead log are gathered and handed to the system as one write.
//
// SQLite writes each WAL frame with two calls, its 24-byte header and then the
// page, so a commit of 280 pages costs 560 pwrite system calls (see walbuf_linux.go
// for what that costs). Here the frames of a commit go to a buffer while they
// follow one another in the file, and the buffer is written out
//   - after the page of a commit frame (a frame header whose "database size"
//     field is not zero), so that a transaction's frames are in the file before
//     SQLite publishes them to readers through the WAL index;
//   - before anything that must see the file as written: a sync, a read, a size
//     query or truncation, a file control, closing;
//   - before a write that does not follow the buffer, and when it is full
//     (at 128 KiB, the most the default VFS writes at once).
// A process that dies with frames in the buffer loses only frames of a
// transaction that had not committed, which SQLite's recovery ignores anyway.
//
// The declarations below are those of sqlite3.h (its stable public ABI): the
// SQLite library itself is compiled by github.com/mattn/go-sqlite3, whose
// sqlite3_vfs_find and sqlite3_vfs_register this file calls. They are declared
// weak so that this package's own cgo link step, which does not see that
// library, succeeds; the program's final link resolves them.

#include <stdlib.h>
#include <string.h>

typedef long long sqlite3_int64;
typedef struct sqlite3_file sqlite3_file;
typedef struct sqlite3_io_methods sqlite3_io_methods;
typedef struct sqlite3_vfs sqlite3_vfs;
typedef void (*sqlite3_syscall_ptr)(void);

struct sqlite3_file {
	const struct sqlite3_io_methods *pMethods;
};

struct sqlite3_io_methods {
	int iVersion;
	int (*xClose)(sqlite3_file *);
	int (*xRead)(sqlite3_file *, void *, int iAmt, sqlite3_int64 iOfst);
	int (*xWrite)(sqlite3_file *, const void *, int iAmt, sqlite3_int64 iOfst);
	int (*xTruncate)(sqlite3_file *, sqlite3_int64 size);
	int (*xSync)(sqlite3_file *, int flags);
	int (*xFileSize)(sqlite3_file *, sqlite3_int64 *pSize);
	int (*xLock)(sqlite3_file *, int);
	int (*xUnlock)(sqlite3_file *, int);
	int (*xCheckReservedLock)(sqlite3_file *, int *pResOut);
	int (*xFileControl)(sqlite3_file *, int op, void *pArg);
	int (*xSectorSize)(sqlite3_file *);
	int (*xDeviceCharacteristics)(sqlite3_file *);
	int (*xShmMap)(sqlite3_file *, int iPg, int pgsz, int, void volatile **);
	int (*xShmLock)(sqlite3_file *, int offset, int n, int flags);
	void (*xShmBarrier)(sqlite3_file *);
	int (*xShmUnmap)(sqlite3_file *, int deleteFlag);
	int (*xFetch)(sqlite3_file *, sqlite3_int64 iOfst, int iAmt, void **pp);
	int (*xUnfetch)(sqlite3_file *, sqlite3_int64 iOfst, void *p);
};

struct sqlite3_vfs {
	int iVersion;
	int szOsFile;
	int mxPathname;
	sqlite3_vfs *pNext;
	const char *zName;
	void *pAppData;
	int (*xOpen)(sqlite3_vfs *, const char *zName, sqlite3_file *, int flags, int *pOutFlags);
	int (*xDelete)(sqlite3_vfs *, const char *zName, int syncDir);
	int (*xAccess)(sqlite3_vfs *, const char *zName, int flags, int *pResOut);
	int (*xFullPathname)(sqlite3_vfs *, const char *zName, int nOut, char *zOut);
	void *(*xDlOpen)(sqlite3_vfs *, const char *zFilename);
	void (*xDlError)(sqlite3_vfs *, int nByte, char *zErrMsg);
	void (*(*xDlSym)(sqlite3_vfs *, void *, const char *zSymbol))(void);
	void (*xDlClose)(sqlite3_vfs *, void *);
	int (*xRandomness)(sqlite3_vfs *, int nByte, char *zOut);
	int (*xSleep)(sqlite3_vfs *, int microseconds);
	int (*xCurrentTime)(sqlite3_vfs *, double *);
	int (*xGetLastError)(sqlite3_vfs *, int, char *);
	int (*xCurrentTimeInt64)(sqlite3_vfs *, sqlite3_int64 *);
	int (*xSetSystemCall)(sqlite3_vfs *, const char *zName, sqlite3_syscall_ptr);
	sqlite3_syscall_ptr (*xGetSystemCall)(sqlite3_vfs *, const char *zName);
	const char *(*xNextSystemCall)(sqlite3_vfs *, const char *zName);
};

extern sqlite3_vfs *sqlite3_vfs_find(const char *zVfsName) __attribute__((weak));
extern int sqlite3_vfs_register(sqlite3_vfs *, int makeDflt) __attribute__((weak));

#define SQLITE_OK 0
#define SQLITE_ERROR 1
#define SQLITE_NOMEM 7
#define SQLITE_OPEN_WAL 0x00080000
#define WAL_FRAME_HDRSIZE 24
// The default VFS writes at most 0x1ffff bytes per call (seekAndWriteFd masks
// the length with it, and answers SQLITE_FULL for the rest), so the buffer
// stays below that: 31 frames of a 4 KiB page.
#define WALBUF_SIZE 0x1ffff

typedef struct walbuf_file {
	sqlite3_file base;  // our methods
	sqlite3_file *real; // the default VFS's file, just past this struct
	char *buf;          // NULL for files other than a WAL
	int len;
	sqlite3_int64 off;  // file offset of buf[0]
	int commitNext;     // the last write was a commit frame's header
} walbuf_file;

static sqlite3_vfs *real_vfs;

// Counts of writes handed to the default VFS for WAL files, for tests.
static sqlite3_int64 wal_writes;

sqlite3_int64 chat_walbuf_writes(void) { return __atomic_load_n(&wal_writes, __ATOMIC_RELAXED); }

static int flush(walbuf_file *p) {
	if (p->len == 0) {
		return SQLITE_OK;
	}
	int n = p->len;
	p->len = 0;
	__atomic_add_fetch(&wal_writes, 1, __ATOMIC_RELAXED);
	return p->real->pMethods->xWrite(p->real, p->buf, n, p->off);
}

// FLUSH_OR_RETURN writes out p's buffer, returning its error from the caller:
// what a method does before it hands a call to the file beneath.
#define FLUSH_OR_RETURN(p) \
	do { \
		int rc_ = flush(p); \
		if (rc_ != SQLITE_OK) { \
			return rc_; \
		} \
	} while (0)

static int wb_close(sqlite3_file *f) {
	walbuf_file *p = (walbuf_file *)f;
	int rc = flush(p);
	int rc2 = p->real->pMethods->xClose(p->real);
	free(p->buf);
	p->buf = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

static int wb_read(sqlite3_file *f, void *data, int n, sqlite3_int64 off) {
	walbuf_file *p = (walbuf_file *)f;
	FLUSH_OR_RETURN(p);
	return p->real->pMethods->xRead(p->real, data, n, off);
}

static int wb_write(sqlite3_file *f, const void *data, int n, sqlite3_int64 off) {
	walbuf_file *p = (walbuf_file *)f;
	if (p->buf == NULL) {
		return p->real->pMethods->xWrite(p->real, data, n, off);
	}
	int rc;
	if (p->len > 0 && (off != p->off + p->len || p->len + n > WALBUF_SIZE)) {
		if ((rc = flush(p)) != SQLITE_OK) {
			return rc;
		}
	}
	if (n > WALBUF_SIZE) {
		p->commitNext = 0;
		__atomic_add_fetch(&wal_writes, 1, __ATOMIC_RELAXED);
		return p->real->pMethods->xWrite(p->real, data, n, off);
	}
	if (p->len == 0) {
		p->off = off;
	}
	memcpy(p->buf + p->len, data, n);
	p->len += n;
	if (p->commitNext) {
		// The page of a commit frame: the transaction's last write.
		p->commitNext = 0;
		return flush(p);
	}
	if (n == WAL_FRAME_HDRSIZE) {
		const unsigned char *h = data;
		p->commitNext = (h[4] | h[5] | h[6] | h[7]) != 0; // the database size after a commit
	}
	return SQLITE_OK;
}

static int wb_truncate(sqlite3_file *f, sqlite3_int64 size) {
	walbuf_file *p = (walbuf_file *)f;
	FLUSH_OR_RETURN(p);
	return p->real->pMethods->xTruncate(p->real, size);
}

static int wb_sync(sqlite3_file *f, int flags) {
	walbuf_file *p = (walbuf_file *)f;
	FLUSH_OR_RETURN(p);
	return p->real->pMethods->xSync(p->real, flags);
}

static int wb_file_size(sqlite3_file *f, sqlite3_int64 *size) {
	walbuf_file *p = (walbuf_file *)f;
	FLUSH_OR_RETURN(p);
	return p->real->pMethods->xFileSize(p->real, size);
}

static int wb_lock(sqlite3_file *f, int level) {
	walbuf_file *p = (walbuf_file *)f;
	return p->real->pMethods->xLock(p->real, level);
}

static int wb_unlock(sqlite3_file *f, int level) {
	walbuf_file *p = (walbuf_file *)f;
	return p->real->pMethods->xUnlock(p->real, level);
}

static int wb_check_reserved_lock(sqlite3_file *f, int *out) {
	walbuf_file *p = (walbuf_file *)f;
	return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int wb_file_control(sqlite3_file *f, int op, void *arg) {
	walbuf_file *p = (walbuf_file *)f;
	FLUSH_OR_RETURN(p);
	return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int wb_sector_size(sqlite3_file *f) {
	walbuf_file *p = (walbuf_file *)f;
	return p->real->pMethods->xSectorSize(p->real);
}

static int wb_device_characteristics(sqlite3_file *f) {
	walbuf_file *p = (walbuf_file *)f;
	return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int wb_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp) {
	walbuf_file *p = (walbuf_file *)f;
	return p->real->pMethods->xShmMap(p->real, pg, pgsz, extend, pp);
}

static int wb_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
	walbuf_file *p = (walbuf_file *)f;
	return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static void wb_shm_barrier(sqlite3_file *f) {
	walbuf_file *p = (walbuf_file *)f;
	p->real->pMethods->xShmBarrier(p->real);
}

static int wb_shm_unmap(sqlite3_file *f, int deleteFlag) {
	walbuf_file *p = (walbuf_file *)f;
	return p->real->pMethods->xShmUnmap(p->real, deleteFlag);
}

static int wb_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp) {
	walbuf_file *p = (walbuf_file *)f;
	FLUSH_OR_RETURN(p);
	return p->real->pMethods->xFetch(p->real, off, n, pp);
}

static int wb_unfetch(sqlite3_file *f, sqlite3_int64 off, void *ptr) {
	walbuf_file *p = (walbuf_file *)f;
	return p->real->pMethods->xUnfetch(p->real, off, ptr);
}

#define WALBUF_METHODS(version) \
	{ \
		version, wb_close, wb_read, wb_write, wb_truncate, wb_sync, wb_file_size, wb_lock, wb_unlock, \
		wb_check_reserved_lock, wb_file_control, wb_sector_size, wb_device_characteristics, wb_shm_map, \
		wb_shm_lock, wb_shm_barrier, wb_shm_unmap, wb_fetch, wb_unfetch, \
	}

// One table per version of the default VFS's file methods: SQLite reads the
// version to know which methods exist, so ours must claim no more than the
// file under it has.
static const sqlite3_io_methods walbuf_methods[3] = {WALBUF_METHODS(1), WALBUF_METHODS(2), WALBUF_METHODS(3)};

static int wb_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *outFlags) {
	walbuf_file *p = (walbuf_file *)f;
	memset(p, 0, sizeof(*p));
	p->real = (sqlite3_file *)&p[1];
	if (flags & SQLITE_OPEN_WAL) {
		if ((p->buf = malloc(WALBUF_SIZE)) == NULL) {
			return SQLITE_NOMEM;
		}
	}
	int rc = real_vfs->xOpen(real_vfs, name, p->real, flags, outFlags);
	if (p->real->pMethods == NULL) {
		// SQLite calls xClose only for a file whose pMethods is set.
		free(p->buf);
		p->buf = NULL;
		return rc;
	}
	int version = p->real->pMethods->iVersion;
	p->base.pMethods = &walbuf_methods[version < 1 ? 0 : version > 3 ? 2 : version - 1];
	return rc;
}

static int wb_delete(sqlite3_vfs *vfs, const char *name, int syncDir) {
	return real_vfs->xDelete(real_vfs, name, syncDir);
}

static int wb_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
	return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int wb_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out) {
	return real_vfs->xFullPathname(real_vfs, name, n, out);
}

static void *wb_dl_open(sqlite3_vfs *vfs, const char *name) { return real_vfs->xDlOpen(real_vfs, name); }

static void wb_dl_error(sqlite3_vfs *vfs, int n, char *msg) { real_vfs->xDlError(real_vfs, n, msg); }

static void (*wb_dl_sym(sqlite3_vfs *vfs, void *h, const char *sym))(void) { return real_vfs->xDlSym(real_vfs, h, sym); }

static void wb_dl_close(sqlite3_vfs *vfs, void *h) { real_vfs->xDlClose(real_vfs, h); }

static int wb_randomness(sqlite3_vfs *vfs, int n, char *out) { return real_vfs->xRandomness(real_vfs, n, out); }

static int wb_sleep(sqlite3_vfs *vfs, int us) { return real_vfs->xSleep(real_vfs, us); }

static int wb_current_time(sqlite3_vfs *vfs, double *t) { return real_vfs->xCurrentTime(real_vfs, t); }

static int wb_get_last_error(sqlite3_vfs *vfs, int n, char *msg) { return real_vfs->xGetLastError(real_vfs, n, msg); }

static int wb_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *t) {
	return real_vfs->xCurrentTimeInt64(real_vfs, t);
}

static sqlite3_vfs walbuf_vfs;

// chat_walbuf_register registers the VFS under name; 0 on success.
int chat_walbuf_register(const char *name) {
	if (sqlite3_vfs_find == NULL || sqlite3_vfs_register == NULL) {
		return SQLITE_ERROR; // not linked with SQLite
	}
	real_vfs = sqlite3_vfs_find(NULL);
	if (real_vfs == NULL || real_vfs->iVersion < 2) {
		return SQLITE_ERROR;
	}
	walbuf_vfs.iVersion = 2;
	walbuf_vfs.szOsFile = (int)sizeof(walbuf_file) + real_vfs->szOsFile;
	walbuf_vfs.mxPathname = real_vfs->mxPathname;
	walbuf_vfs.zName = name;
	walbuf_vfs.xOpen = wb_open;
	walbuf_vfs.xDelete = wb_delete;
	walbuf_vfs.xAccess = wb_access;
	walbuf_vfs.xFullPathname = wb_full_pathname;
	walbuf_vfs.xDlOpen = wb_dl_open;
	walbuf_vfs.xDlError = wb_dl_error;
	walbuf_vfs.xDlSym = wb_dl_sym;
	walbuf_vfs.xDlClose = wb_dl_close;
	walbuf_vfs.xRandomness = wb_randomness;
	walbuf_vfs.xSleep = wb_sleep;
	walbuf_vfs.xCurrentTime = wb_current_time;
	walbuf_vfs.xGetLastError = wb_get_last_error;
	walbuf_vfs.xCurrentTimeInt64 = wb_current_time_int64;
	return sqlite3_vfs_register(&walbuf_vfs, 0);
}

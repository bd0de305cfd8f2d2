package prefault

import "golang.org/x/sys/unix"

// populate takes addresses, not a slice: the heap's range past its newest
// allocation is no Go object a slice could be made of.
func populate(start, n uintptr) error {
	if _, _, e := unix.Syscall(unix.SYS_MADVISE, start, n, unix.MADV_POPULATE_WRITE); e != 0 {
		return e
	}
	return nil
}

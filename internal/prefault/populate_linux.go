package prefault

import "syscall"

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14, the same number on
// every architecture): the standard library's syscall package predates it,
// and this package keeps to the standard library so that the packages that
// use it are initialised early (internal/heapwarm, internal/widthwarm).
const madvPopulateWrite = 23

// populate takes addresses, not a slice: the heap's range past its newest
// allocation is no Go object a slice could be made of.
func populate(start, n uintptr) error {
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, start, n, madvPopulateWrite); e != 0 {
		return e
	}
	return nil
}

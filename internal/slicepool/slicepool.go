// Package slicepool recycles the slices a burst of work fills and then lets go
// of (a connection's queues, read and write buffers), so that a busy server does
// not grow a fresh one per burst and an idle connection holds none.
package slicepool

import "sync"

// Pool hands out empty slices of T and takes them back. The zero value is not
// usable; call New.
type Pool[T any] struct {
	p   sync.Pool
	max int
}

// New returns a Pool whose new slices have room for size elements and which
// keeps none whose capacity is above max: one huge burst should not keep its
// storage alive.
func New[T any](size, max int) *Pool[T] {
	return &Pool[T]{p: sync.Pool{New: func() any { s := make([]T, 0, size); return &s }}, max: max}
}

// Get returns an empty slice.
func (p *Pool[T]) Get() []T { return (*p.p.Get().(*[]T))[:0] }

// Put takes back a slice no one uses any more. Its elements up to its length
// are zeroed, so that it keeps nothing they pointed to alive; callers hand back
// the slice as they last used it, and past its length it is already zero.
func (p *Pool[T]) Put(s []T) {
	if cap(s) == 0 || cap(s) > p.max {
		return
	}
	clear(s)
	s = s[:0]
	p.p.Put(&s)
}

//go:build linux

package prefault_test

import (
	"syscall"
	"testing"

	"github.com/chatterm/chat/internal/prefault"
)

// BenchmarkFreshPages writes one byte in each page of a fresh 2.2 MB
// mapping (the size of go-runewidth's width table), one trap a page, and
// the same after asking for its pages with Populate. Each iteration maps
// memory of its own.
func BenchmarkFreshPages(b *testing.B) {
	const size = 2 * 0x110000
	for _, populate := range []bool{false, true} {
		name := "traps"
		if populate {
			name = "populated"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
				if err != nil {
					b.Fatal(err)
				}
				if populate {
					if err := prefault.Populate(m); err != nil {
						b.Skipf("this kernel does not populate: %v", err)
					}
				}
				for i := 0; i < len(m); i += 4096 {
					m[i] = 1
				}
				syscall.Munmap(m)
			}
		})
	}
}

package widthwarm

import (
	"unsafe"
	_ "unsafe" // for go:linkname

	"github.com/chatterm/chat/internal/prefault"
)

// strictWidthLUT is go-runewidth's width table (v0.0.28–v0.0.31: two
// tables of one byte per code point, East Asian widths off and on), which
// its first lookup past U+02FF fills above U+02FF. The package gives no way
// to reach its memory, which is what populating it needs: a page fault per
// 4 KiB page otherwise, 550 of them. TestTableIsGoRunewidths fails if a
// release renames it or changes its layout (a linkname to a name that is no
// longer there would be a table of our own, never written).
//
//go:linkname strictWidthLUT github.com/mattn/go-runewidth.strictWidthLUT
var strictWidthLUT [2][0x110000]byte

// populateTable asks for the table's pages in one call before it is built.
func populateTable() error {
	return prefault.Populate(unsafe.Slice(&strictWidthLUT[0][0], len(strictWidthLUT)*len(strictWidthLUT[0])))
}

package httpd

import (
	"bytes"
	"testing"

	"github.com/chatterm/chat/server/conn"
)

func TestBatchLen(t *testing.T) {
	frames := func(sizes ...int) []conn.Frame {
		var out []conn.Frame
		for _, n := range sizes {
			out = append(out, conn.Frame{Data: bytes.Repeat([]byte("x"), n)})
		}
		return out
	}
	cases := map[string]struct {
		sizes []int
		want  int
	}{
		"One":              {[]int{10}, 1},
		"AllFit":           {[]int{10, 10, 10}, 3},
		"ExactlyTheLimit":  {[]int{49, 50}, 2}, // 49 + '\n' + 50
		"OneByteOver":      {[]int{50, 50}, 1},
		"StopsAtTheLimit":  {[]int{40, 40, 40}, 2},
		"BigFrameAlone":    {[]int{500, 10}, 1},
		"BigFrameNotAdded": {[]int{10, 500}, 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := batchLen(frames(c.sizes...), 100); got != c.want {
				t.Fatalf("batchLen(%v, 100) = %d, want %d", c.sizes, got, c.want)
			}
		})
	}
}

package slicepool

import "testing"

func TestGetIsEmptyAndPutZeroes(t *testing.T) {
	p := New[*int](4, 8)
	s := p.Get()
	if len(s) != 0 || cap(s) < 4 {
		t.Fatalf("Get: len %d cap %d, want an empty slice with room for 4", len(s), cap(s))
	}
	v := 1
	s = append(s, &v, &v)
	backing := s[:cap(s)]
	p.Put(s)
	if backing[0] != nil || backing[1] != nil {
		t.Fatal("Put left pointers in the slice it keeps")
	}
}

func TestPutDropsLargeSlices(t *testing.T) {
	p := New[int](1, 8)
	p.Put(make([]int, 100))
	for range 10 {
		if s := p.Get(); cap(s) > 8 {
			t.Fatalf("Get returned a slice of capacity %d, above the bound 8", cap(s))
		}
	}
}

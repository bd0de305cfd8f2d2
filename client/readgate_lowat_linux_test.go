package client

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// The mechanism the pause relies on, on this kernel: with the low-water
// mark raised, data arriving on a socket does not make it readable to an
// edge-triggered epoll (so the Go poller is not woken); lowered again, the
// data waiting is reported at once.
func TestRaisedLowWaterWakesNoPoller(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	sender, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	recv := <-accepted
	defer recv.Close()
	raw, err := recv.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	setLowWater := lowWaterSetter(raw)
	if setLowWater == nil {
		t.Fatal("no low-water setter for a TCP socket on Linux")
	}
	var fd int
	if err := raw.Control(func(f uintptr) { fd = int(f) }); err != nil {
		t.Fatal(err)
	}
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(ep)
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN | -syscall.EPOLLET, Fd: int32(fd)}); err != nil {
		t.Fatal(err)
	}
	events := make([]syscall.EpollEvent, 1)
	wait := func(ms int) int {
		n, err := syscall.EpollWait(ep, events, ms)
		for err == syscall.EINTR {
			n, err = syscall.EpollWait(ep, events, ms)
		}
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := wait(0); n != 0 {
		t.Fatalf("an empty socket reported readable (%d events)", n)
	}

	if err := setLowWater(true); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 300) // a held stream's message, and more than one
	for range 5 {
		if _, err := sender.Write(frame); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if n := wait(100); n != 0 {
		t.Fatalf("with the mark raised, 1,500 bytes arriving woke the poller (%d events)", n)
	}

	if err := setLowWater(false); err != nil {
		t.Fatal(err)
	}
	if n := wait(1000); n != 1 {
		t.Fatalf("with the mark lowered, the waiting bytes were not reported (%d events)", n)
	}
	got, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVLOWAT)
	if err != nil || got != 1 {
		t.Fatalf("SO_RCVLOWAT after the pause = %d (%v), want 1", got, err)
	}
}

// The mark never needs more room than the socket's buffer has: Linux would
// grow the buffer (and clamp the TCP window to the mark for good) if it did.
// The buffer is left to the kernel, as the session's is.
func TestLowWaterFitsTheBuffer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	read := func(opt int) int {
		var v int
		var gerr error
		if err := raw.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, opt) }); err != nil {
			t.Fatal(err)
		}
		if gerr != nil {
			t.Fatal(gerr)
		}
		return v
	}
	before := read(syscall.SO_RCVBUF)
	set := lowWaterSetter(raw)
	if set == nil {
		t.Fatal("no setter")
	}
	if err := set(true); err != nil {
		t.Fatal(err)
	}
	mark, after := read(syscall.SO_RCVLOWAT), read(syscall.SO_RCVBUF)
	if mark <= 1 || mark > before/4 {
		t.Fatalf("raised mark %d with a %d-byte buffer: want above 1, at most a quarter", mark, before)
	}
	if after != before {
		t.Fatalf("raising the mark to %d grew the receive buffer from %d to %d bytes", mark, before, after)
	}
}

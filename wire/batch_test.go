package wire

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"testing"
	"testing/iotest"
)

// joinFrames builds one message from frames the way a writer does.
func joinFrames(t testing.TB, frames []Frame) []byte {
	t.Helper()
	var msg []byte
	for _, f := range frames {
		b, err := EncodeFrame(f)
		if err != nil {
			t.Fatal(err)
		}
		msg = AppendFrame(msg, b)
	}
	return msg
}

func TestBatchRoundTrip(t *testing.T) {
	want := sampleFrames()
	msg := joinFrames(t, want)
	var got []Frame
	for line := range Frames(msg) {
		f, err := DecodeFrame(line)
		if err != nil {
			t.Fatalf("decode %s: %v", line, err)
		}
		got = append(got, f)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("batch round trip changed the frames:\n got %+v\nwant %+v", got, want)
	}
}

func TestFramesSplit(t *testing.T) {
	cases := map[string]struct {
		msg  string
		want []string
	}{
		"OneFrame":          {`{"type":"ping"}`, []string{`{"type":"ping"}`}},
		"Two":               {`{"type":"ping"}` + "\n" + `{"type":"pong"}`, []string{`{"type":"ping"}`, `{"type":"pong"}`}},
		"TrailingNewline":   {`{"type":"ping"}` + "\n", []string{`{"type":"ping"}`}},
		"EmptyLinesIgnored": {"\n\n" + `{"type":"ping"}` + "\n \r\n\t\n" + `{"type":"pong"}` + "\n\n", []string{`{"type":"ping"}`, `{"type":"pong"}`}},
		"CRLF":              {`{"type":"ping"}` + "\r\n" + `{"type":"pong"}`, []string{`{"type":"ping"}` + "\r", `{"type":"pong"}`}},
		"Empty":             {"", nil},
		"OnlyBlank":         {" \n\n\r\n", nil},
		"BadLineKept":       {`{"type":"ping"}` + "\n{oops\n" + `{"type":"pong"}`, []string{`{"type":"ping"}`, `{oops`, `{"type":"pong"}`}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for f := range Frames([]byte(c.msg)) {
				got = append(got, string(f))
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("Frames(%q) = %q, want %q", c.msg, got, c.want)
			}
		})
	}
}

// A malformed line fails on its own: the frames around it still decode.
func TestBatchBadLineDoesNotStopTheRest(t *testing.T) {
	good := joinFrames(t, sampleFrames()[:2])
	ack := slices.IndexFunc(sampleFrames(), func(f Frame) bool { return f.Type == TypeAck })
	msg := AppendFrame(AppendFrame(good, []byte(`{"type":"send","id":"x"`)), joinFrames(t, sampleFrames()[ack:ack+1]))
	var types []string
	var errs int
	for line := range Frames(msg) {
		f, err := DecodeFrame(line)
		if err != nil {
			if ErrorCode(err) != CodeInvalid {
				t.Fatalf("code %s, want invalid", ErrorCode(err))
			}
			errs++
			continue
		}
		types = append(types, f.Type)
	}
	if errs != 1 || !slices.Equal(types, []string{TypeSend, TypeSend, TypeAck}) {
		t.Fatalf("errors %d, frames %v; want 1 error and send, send, ack", errs, types)
	}
}

func TestFramesStopsEarly(t *testing.T) {
	n := 0
	for range Frames(joinFrames(t, sampleFrames())) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("iterated %d frames", n)
	}
}

func TestCutFrameAllocatesNothing(t *testing.T) {
	msg := joinFrames(t, sampleFrames())
	allocs := testing.AllocsPerRun(100, func() {
		for range Frames(msg) {
		}
	})
	if allocs != 0 {
		t.Fatalf("splitting a message allocates %.0f times", allocs)
	}
}

func TestReadMessageReusesItsBuffer(t *testing.T) {
	msg := bytes.Repeat([]byte(`{"type":"ping","id":"x"}`+"\n"), 100)
	buf, err := ReadMessage(iotest.OneByteReader(bytes.NewReader(msg)), nil)
	if err != nil || !bytes.Equal(buf, msg) {
		t.Fatalf("ReadMessage = %d bytes, %v; want the %d bytes read one at a time", len(buf), err, len(msg))
	}
	again, err := ReadMessage(bytes.NewReader(msg[:10]), buf)
	if err != nil || !bytes.Equal(again, msg[:10]) || &again[0] != &buf[0] {
		t.Fatalf("second read = %q, %v; want the first 10 bytes in the same storage", again, err)
	}
	boom := errors.New("connection reset")
	if _, err := ReadMessage(iotest.ErrReader(boom), buf); !errors.Is(err, boom) {
		t.Fatalf("error = %v, want the reader's", err)
	}
}

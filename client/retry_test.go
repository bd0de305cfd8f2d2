package client_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// fakeSends answers POST .../messages with answer(n) for the n-th request
// (from 1); answer nil hangs until the request is cancelled.
func fakeSends(t *testing.T, answer func(n int64) func(w http.ResponseWriter)) (*client.API, *atomic.Int64) {
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so the server notices the client going away
		a := answer(n.Add(1))
		if a == nil {
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
			return
		}
		a(w)
	}))
	t.Cleanup(ts.Close)
	return client.NewAPI(ts.URL, "token", ts.Client()), &n
}

func refuse(status int, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

var stored = refuse(http.StatusCreated, `{"conversation_id":"g:abc","seq_no":7,"message_id":"m-1","timestamp":"2026-11-26T00:00:00Z"}`)

// Issue 27: SendNow resends through unavailable answers with no hint and an
// attempt that never answers; giving up after either, it says the message
// may be stored; a refusal or a connection never made is said as it is.
func TestSendNowRetries(t *testing.T) {
	req := wire.SendRequest{MessageID: "m-1", Content: "x"}
	t.Run("OKUnavailableWithoutHint", func(t *testing.T) {
		api, n := fakeSends(t, func(n int64) func(http.ResponseWriter) {
			if n <= 3 {
				return refuse(http.StatusServiceUnavailable, "") // a proxy's bare 503
			}
			return stored
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := api.SendNow(ctx, "g:abc", req)
		if err != nil || resp.SeqNo != 7 || n.Load() != 4 {
			t.Fatalf("resp %+v, err %v after %d requests", resp, err, n.Load())
		}
	})
	t.Run("OKAttemptWithoutAnswer", func(t *testing.T) {
		api, n := fakeSends(t, func(n int64) func(http.ResponseWriter) {
			if n == 1 {
				return nil // hangs: its budget (a quarter of 10 s) ends it
			}
			return stored
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := api.SendNow(ctx, "g:abc", req)
		if err != nil || resp.SeqNo != 7 || n.Load() != 2 {
			t.Fatalf("resp %+v, err %v after %d requests", resp, err, n.Load())
		}
	})
	t.Run("ErrGivesUpMaybeStored", func(t *testing.T) {
		api, _ := fakeSends(t, func(int64) func(http.ResponseWriter) {
			return refuse(http.StatusServiceUnavailable, `{"error":{"code":"maybe_stored","message":"timed out"}}`)
		})
		ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
		defer cancel()
		_, err := api.SendNow(ctx, "g:abc", req)
		var ms *client.MaybeStoredError
		if !errors.As(err, &ms) || ms.MessageID != "m-1" || wire.ErrorCode(err) != wire.CodeMaybeStored {
			t.Fatalf("err = %#v", err)
		}
	})
	t.Run("ErrRefusalNotResent", func(t *testing.T) {
		api, n := fakeSends(t, func(int64) func(http.ResponseWriter) {
			return refuse(http.StatusConflict, `{"error":{"code":"message_id_taken","message":"taken"}}`)
		})
		_, err := api.SendNow(context.Background(), "g:abc", req)
		if wire.ErrorCode(err) != "message_id_taken" || errors.As(err, new(*client.MaybeStoredError)) || n.Load() != 1 {
			t.Fatalf("err %v after %d requests", err, n.Load())
		}
	})
	t.Run("ErrDialOutlivesTheDeadline", func(t *testing.T) {
		// A dial still waiting when the deadline runs out (a loaded machine,
		// a server that does not accept): nothing was written, so nothing
		// may be stored. Once failed as maybe_stored under a loaded -race run.
		hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}}
		api := client.NewAPI("http://127.0.0.1:1", "token", hc)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := api.SendNow(ctx, "g:abc", req)
		if err == nil || errors.As(err, new(*client.MaybeStoredError)) {
			t.Fatalf("err = %#v: never connected, so nothing may be stored", err)
		}
	})
	t.Run("ErrNeverConnected", func(t *testing.T) {
		api := client.NewAPI("http://127.0.0.1:1", "token", nil)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := api.SendNow(ctx, "g:abc", req)
		if !client.IsNetError(err) || errors.As(err, new(*client.MaybeStoredError)) {
			t.Fatalf("err = %#v: nothing left, so nothing may be stored", err)
		}
	})
}

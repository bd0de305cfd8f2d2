package e2e

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

func TestMediaByPresignedURL(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	bws := dial(t, bob)

	var up wire.MediaResponse
	png := []byte("\x89PNG\r\n\x1a\n pretend picture")
	if st := alice.do("POST", "/v1/media", wire.MediaRequest{ContentType: "image/png", Size: int64(len(png))}, &up); st != 201 || up.UploadURL == "" {
		t.Fatalf("create media: %d %+v", st, up)
	}
	req, _ := http.NewRequest("PUT", up.UploadURL, bytes.NewReader(png))
	req.Header.Set("Content-Type", "image/png")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("upload: %s", resp.Status)
	}

	var sent wire.SendResponse
	if st := alice.do("POST", "/v1/conversations/"+conv+"/messages", wire.SendRequest{MessageID: "pic", Attachment: up.MediaID}, &sent); st != 201 {
		t.Fatalf("send with attachment: %d", st)
	}
	m := bws.next(isMessage(conv)).Message
	if m.Attachment != up.MediaID || m.Content != "" {
		t.Fatalf("bob got %+v", m)
	}
	if h := bob.history(conv, 0, 10); h.Messages[0].Attachment != up.MediaID {
		t.Fatalf("history lost the attachment: %+v", h.Messages[0])
	}
	// Bob follows the redirect to a presigned download.
	req, _ = http.NewRequest("GET", srv.URL+"/v1/media/"+up.MediaID, nil)
	req.Header.Set("Authorization", "Bearer "+bob.token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, png) || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("download: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}

	// Someone else's upload cannot be attached; a made-up id is refused.
	var e wire.ErrorResponse
	if st := bob.do("POST", "/v1/conversations/"+conv+"/messages", wire.SendRequest{MessageID: "steal", Attachment: up.MediaID}, &e); st != 403 {
		t.Fatalf("attaching alice's upload: %d", st)
	}
	if st := bob.do("POST", "/v1/conversations/"+conv+"/messages", wire.SendRequest{MessageID: "bad", Attachment: "media/bob/../../x"}, &e); st != 400 {
		t.Fatalf("malformed media id: %d", st)
	}
	if st := alice.do("POST", "/v1/media", wire.MediaRequest{ContentType: "not a type", Size: 1}, &e); st != 400 {
		t.Fatalf("bad content type: %d", st)
	}
}

func TestAttachmentOverWebSocket(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	var up wire.MediaResponse
	alice.do("POST", "/v1/media", wire.MediaRequest{ContentType: "text/plain", Size: 1}, &up)
	aws, bws := dial(t, alice), dial(t, bob)
	id := aws.id()
	aws.write(wire.Frame{Type: wire.TypeSend, ID: id, ConversationID: conv, MessageID: "att", Attachment: up.MediaID})
	if f := aws.next(func(f wire.Frame) bool { return f.ID == id }); f.Type != wire.TypeSent {
		t.Fatalf("attachment-only send over the socket: %+v", f)
	}
	if m := bws.next(isMessage(conv)).Message; m.Attachment != up.MediaID {
		t.Fatalf("bob got %+v", m)
	}
}

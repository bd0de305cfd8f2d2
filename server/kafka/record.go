package kafka

import (
	"encoding/json"
	"fmt"

	"github.com/chatterm/chat/server"
)

// update is a record's value: one server.PresenceChange. JSON with short
// names keeps it readable with kafka-console-consumer at ~100 bytes.
type update struct {
	User    string `json:"u"`
	Conn    string `json:"c"`
	Node    string `json:"n"`
	Version int64  `json:"v"`
	Gone    bool   `json:"g,omitempty"`
}

func encode(ch server.PresenceChange) ([]byte, error) {
	return json.Marshal(update{User: ch.UserID, Conn: ch.ConnID, Node: ch.NodeID, Version: ch.Version, Gone: ch.Gone})
}

// decode reads a record's value; one that is not an update (another producer
// on the topic) is an error the worker logs and skips.
func decode(b []byte) (server.PresenceChange, error) {
	var u update
	if err := json.Unmarshal(b, &u); err != nil {
		return server.PresenceChange{}, fmt.Errorf("registry update %q: %w", b, err)
	}
	if u.User == "" || u.Conn == "" || u.Node == "" || u.Version == 0 {
		return server.PresenceChange{}, fmt.Errorf("registry update %q: a field is missing", b)
	}
	return server.PresenceChange{Presence: server.Presence{UserID: u.User, ConnID: u.Conn, NodeID: u.Node}, Gone: u.Gone, Version: u.Version}, nil
}

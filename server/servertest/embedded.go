package servertest

import (
	"testing"

	"github.com/chatterm/chat/server/node"
)

// productionConfig is replaced by production.go (the production backend's
// settings from the CHAT_TEST_* variables); until then production tests skip.
var productionConfig = func(tb testing.TB) node.Production {
	tb.Skip("CHATSERVER_TEST_BACKEND=production: the production backends are not wired into servertest yet")
	return node.Production{}
}

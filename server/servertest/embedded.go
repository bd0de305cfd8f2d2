package servertest

import (
	"testing"

	"github.com/chatterm/chat/server/node"
)

// productionConfig gives the production backend's settings from the CHAT_TEST_*
// variables. production.go replaces it in an init function; until then
// production runs skip.
var productionConfig = func(tb testing.TB) node.Production {
	tb.Skip("CHATSERVER_TEST_BACKEND=production: the production backends are not wired into servertest yet")
	return node.Production{}
}

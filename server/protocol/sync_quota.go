package protocol

import "github.com/chatterm/chat/wire"

// syncLimit bounds how many messages one sync answer carries.
const syncLimit = 1000

// syncQuota is what one sync may still send: the messages the history pages
// it has taken from the user's limit cover (wire.MaxPageSize a page), at
// most syncLimit. The sync takes a page before the store read that needs it,
// not after the messages went out, so an answer never carries more than the
// limit allows: charged afterwards, one answer a second could send up to
// syncLimit messages whatever the limit (a limit of 3 pages, 300 messages,
// let a sync send 1,000).
type syncQuota struct {
	e       *Engine
	user    string
	covered int // messages the pages taken so far cover
	sent    int
	refused bool // the limit refused a page: the sync ends with more
}

// newSyncQuota starts the quota of a sync that took pages for its cursors
// (Service.AllowSync).
func (e *Engine) newSyncQuota(user string, pages int) *syncQuota {
	return &syncQuota{e: e, user: user, covered: pages * wire.MaxPageSize}
}

// room says how many of want messages the next store read may fetch,
// taking another page from the user's history limit when the ones taken
// are used up; 0 when the limit or syncLimit says no more.
func (q *syncQuota) room(want int) int {
	if q.spent() {
		return 0
	}
	if q.sent >= q.covered {
		if err := q.e.svc.TakeHistoryPage(q.e.svc.Context(), q.user); err != nil {
			q.refused = true
			return 0
		}
		q.covered += wire.MaxPageSize
	}
	return min(want, q.covered-q.sent, syncLimit-q.sent)
}

func (q *syncQuota) spend(n int) { q.sent += n }

// spent says the sync may send nothing more.
func (q *syncQuota) spent() bool { return q.refused || q.sent >= syncLimit }

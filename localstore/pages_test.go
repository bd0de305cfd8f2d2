package localstore

import (
	"strings"
	"testing"
)

// queryPlan is SQLite's EXPLAIN QUERY PLAN for q, its steps joined by "; ".
func queryPlan(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	return strings.Join(queryPlanSteps(t, s, q, args...), "; ")
}

// queryPlanSteps is SQLite's EXPLAIN QUERY PLAN for q, a step each.
func queryPlanSteps(t *testing.T, s *Store, q string, args ...any) []string {
	t.Helper()
	rows, err := s.db.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// Opening a chat at its first unread costs a page, however many are unread:
// the page below a seq_no walks the primary key from there (no scan, no
// sort), and the inbox's unread-mentions count walks the partial index of
// mentions, never the unread messages themselves.
func TestPageReadsWalkTheKeys(t *testing.T) {
	s := MustOpen(t)
	page := queryPlan(t, s, pageBelowQuery, "dm:alice:bob", 45_051, 50)
	if !strings.Contains(page, "USING PRIMARY KEY (conversation_id=? AND seq_no<?)") || strings.Contains(page, "TEMP B-TREE") {
		t.Fatalf("page below a seq_no: %s", page)
	}
	inbox := queryPlan(t, s, `SELECT `+inboxColumns+` FROM inbox ORDER BY last_message_at DESC, conversation_id LIMIT 50`)
	if !strings.Contains(inbox, "messages_mentioning_me (conversation_id=? AND seq_no>?)") {
		t.Fatalf("the inbox's unread mentions do not walk messages_mentioning_me: %s", inbox)
	}
}

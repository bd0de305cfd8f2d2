package localstore

// pageBelowQuery is a page of a conversation below a seq_no, newest first:
// a walk down the primary key from that seq_no, whatever lies above it (a
// chat opened at its first unread reads the page there, not the unread
// messages between it and the newest: TestPageReadsWalkTheKeys).
const pageBelowQuery = `SELECT ` + messageColumns + ` FROM messages
	WHERE conversation_id = ? AND seq_no < ? ORDER BY seq_no DESC LIMIT ?`

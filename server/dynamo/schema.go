package dynamo

// SchemaVersion numbers the layout of the tables: their keys, indexes and TTL
// attributes (tables.go, docs/dynamodb.md), and the items a build expects in
// them. 2 added the users-table item "#store" (identity.go), which records
// the version too: tables of version 1 get it from the first node of version
// 2 that starts on them, and a build older than the version it records
// refuses the tables. It is what `chatserver --version` reports.
const SchemaVersion = 2

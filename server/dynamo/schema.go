package dynamo

// SchemaVersion numbers the layout of the tables: their keys, indexes and TTL
// attributes (tables.go, docs/dynamodb.md). There has been one layout so far,
// the one CreateTables makes, and nothing records it in the tables; the
// number is what `chatserver --version` reports, and goes up with the first
// change that needs existing tables migrated.
const SchemaVersion = 1

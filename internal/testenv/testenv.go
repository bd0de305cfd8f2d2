// Package testenv gives tests what several packages need: the services that
// scripts/services.sh starts (Redis, and moto for DynamoDB and S3), named by
// environment variables, and a way to wait for a condition (wait.go).
package testenv

import (
	"os"
	"testing"
)

// The variables scripts/services.sh prints.
const (
	RedisVar  = "CHAT_TEST_REDIS_ADDR"      // host:port of a redis-server
	DynamoVar = "CHAT_TEST_DYNAMO_ENDPOINT" // URL of moto: DynamoDB and S3
)

// Require returns the value of the variable name, which locates what (for the
// message). Without it the test skips, except on CI (CI set), where a missing
// service is a failure: CI never skips these tests.
func Require(tb testing.TB, name, what string) string {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%s is not set (CI is): run scripts/services.sh", name)
		}
		tb.Skipf("%s is not set: run eval \"$(scripts/services.sh)\" to test against %s", name, what)
	}
	return v
}

// RedisAddr is the Redis of the tests.
func RedisAddr(tb testing.TB) string {
	tb.Helper()
	return Require(tb, RedisVar, "Redis")
}

// DynamoEndpoint is moto's URL, for DynamoDB and S3.
func DynamoEndpoint(tb testing.TB) string {
	tb.Helper()
	return Require(tb, DynamoVar, "moto")
}

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
	// One node of a Redis Cluster of three masters with a replica each
	// (scripts/services.sh cluster).
	RedisClusterVar = "CHAT_TEST_REDIS_CLUSTER_ADDR"
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

// RedisClusterAddr is one node of the tests' Redis Cluster with replicas.
func RedisClusterAddr(tb testing.TB) string {
	tb.Helper()
	v := os.Getenv(RedisClusterVar)
	if v == "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%s is not set (CI is): run scripts/services.sh cluster", RedisClusterVar)
		}
		tb.Skipf("%s is not set: run eval \"$(scripts/services.sh cluster)\" to test against a Redis Cluster with replicas", RedisClusterVar)
	}
	return v
}

// DynamoEndpoint is moto's URL, for DynamoDB and S3.
func DynamoEndpoint(tb testing.TB) string {
	tb.Helper()
	return Require(tb, DynamoVar, "moto")
}

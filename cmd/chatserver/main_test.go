package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

func TestMainRunsOnPortZero(t *testing.T) {
	var logs bytes.Buffer
	m := NewMain(&logs)
	env := map[string]string{"CHATSERVER_REGISTRATION": "closed", "CHATSERVER_DATA_DIR": "ignored-by-flag"}
	err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-format", "json"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.Registration != "closed" {
		t.Fatalf("env CHATSERVER_REGISTRATION not applied: %q", m.Config.Registration)
	}
	if strings.HasPrefix(m.Config.DataDir, "ignored") {
		t.Fatal("env overrode an explicit flag")
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	resp, err := http.Get("http://" + m.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Fatalf("healthz: %d %q", resp.StatusCode, body)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if !strings.Contains(logs.String(), `"msg":"chatserver listening"`) {
		t.Fatalf("no JSON start log: %s", logs.String())
	}
}

func TestParseFlagsErrors(t *testing.T) {
	for name, args := range map[string][]string{
		"ErrRegistrationMode": {"--registration", "sometimes"},
		"ErrNotANumber":       {"--send-rate", "fast"},
		"ErrStrayArgument":    {"serve"},
		"ErrUnknownFlag":      {"--colour"},
		"ErrDuration":         {"--archive-after", "30 days"},
		"ErrSwitchValue":      {"--no-sync=maybe"},
		"ErrMaxInFlight":      {"--max-in-flight", "0"},
		"ErrAddrPort":         {"--addr", ":99999"},
		"ErrAddrNoPort":       {"--addr", "127.0.0.1"},
		"ErrMetricsAddrPort":  {"--metrics-addr", "127.0.0.1:70000"},
	} {
		t.Run(name, func(t *testing.T) {
			m := NewMain(io.Discard)
			if err := m.ParseFlags(args, func(string) string { return "" }); err == nil {
				t.Fatalf("%v accepted", args)
			}
		})
	}
	m := NewMain(io.Discard)
	if err := m.ParseFlags(nil, func(k string) string {
		return map[string]string{"CHATSERVER_SEND_RATE": "many"}[k]
	}); err == nil || !strings.Contains(err.Error(), "CHATSERVER_SEND_RATE") {
		t.Fatalf("bad env value: %v", err)
	}
}

// A switch works alone, as the flag package's booleans do, and still takes a value.
func TestParseFlagsSwitches(t *testing.T) {
	m := NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--no-sync", "--create-tables", "--redis-tls=false", "--send-rate", "-1"}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if !c.NoSync || !c.Production.CreateTables || c.Production.RedisTLS || c.SendRate != -1 {
		t.Fatalf("parsed %+v", c)
	}
}

// The binary runs on as few processors as the load needs unless told not to
// or GOMAXPROCS is set; stopping puts the count back.
func TestAdaptProcsFollowsItsFlagAndGOMAXPROCS(t *testing.T) {
	before := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(before)
	for _, c := range []struct {
		args   []string
		env    map[string]string
		adapts bool
	}{
		{nil, nil, true},
		{[]string{"--adaptive-procs=false"}, nil, false},
		{nil, map[string]string{"CHATSERVER_ADAPTIVE_PROCS": "false"}, false},
		{nil, map[string]string{"GOMAXPROCS": "2"}, false},
	} {
		t.Run(fmt.Sprint(c.args, c.env), func(t *testing.T) {
			t.Setenv("GOMAXPROCS", c.env["GOMAXPROCS"]) // read from the process's environment
			getenv := func(k string) string { return c.env[k] }
			m := NewMain(io.Discard)
			if err := m.ParseFlags(c.args, getenv); err != nil {
				t.Fatal(err)
			}
			stop := m.AdaptProcs()
			during := runtime.GOMAXPROCS(0)
			stop()
			if adapted := during == 1; adapted != c.adapts {
				t.Errorf("%v %v: GOMAXPROCS %d while adapting, want adapting %v", c.args, c.env, during, c.adapts)
			}
			if after := runtime.GOMAXPROCS(0); after != 2 {
				t.Errorf("%v %v: GOMAXPROCS %d after stop, want the 2 it found", c.args, c.env, after)
			}
		})
	}
}

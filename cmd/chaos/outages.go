package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// backendOutage is a time a node's calls to a backing service failed or were
// refused, as the node logged it (server/breaker): from its first failure to
// its "answers again" line, or to the end of the run if none came. Besides
// the scheduled faults, moto behind the run's one-at-a-time proxy on a loaded
// machine times out now and then, and the DynamoDB breakers (1 % errors over
// 30 s) then refuse every call for a few seconds: messages wait for the store
// then, whatever else works.
type backendOutage struct {
	node, service string
	start, end    time.Time
}

// readOutages reads the outages one node's log tells of. A node started
// again (the "chatserver listening" line) is a new process: an outage its
// old process never saw end ends there.
func readOutages(node, path string, runEnd time.Time) ([]backendOutage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []backendOutage
	open := map[string]time.Time{} // service → since (a WARN line with no INFO yet)
	closeAll := func(at time.Time) {
		for svc, since := range open {
			out = append(out, backendOutage{node: node, service: svc, start: since, end: at})
		}
		clear(open)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		at, ok := logTime(line)
		if !ok {
			continue
		}
		switch {
		case strings.Contains(line, `msg="chatserver listening"`):
			closeAll(at)
		case strings.Contains(line, ` is failing: calls are refused or time out"`):
			svc := logAttr(line, "service")
			if _, seen := open[svc]; !seen {
				open[svc] = at
			}
		case strings.Contains(line, ` answers again"`):
			svc := logAttr(line, "service")
			outFor, err := time.ParseDuration(logAttr(line, "out_for"))
			if err != nil {
				continue
			}
			delete(open, svc)
			// out_for counts from the first failure, which may come before
			// the WARN line (the breaker waits to see calls keep failing).
			out = append(out, backendOutage{node: node, service: svc, start: at.Add(-outFor), end: at})
		}
	}
	closeAll(runEnd)
	return out, sc.Err()
}

// logTime is a slog text line's time.
func logTime(line string) (time.Time, bool) {
	v := logAttr(line, "time")
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}

// logAttr is the value of key=value in a slog text line (unquoted if quoted).
func logAttr(line, key string) string {
	i := strings.Index(line, key+"=")
	for i > 0 && line[i-1] != ' ' {
		j := strings.Index(line[i+1:], key+"=")
		if j < 0 {
			return ""
		}
		i += 1 + j
	}
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+1:]
	if strings.HasPrefix(v, `"`) {
		if end := strings.Index(v[1:], `"`); end >= 0 {
			return v[1 : end+1]
		}
		return v[1:]
	}
	if end := strings.IndexByte(v, ' '); end >= 0 {
		return v[:end]
	}
	return v
}

// settledBy is when a message that could be delivered from from on must be
// held, within bound: bound after from, or, if a backend was out on some node
// then, bound after the last such outage that began before that deadline
// ended. docs/reliability.md promises delivery within the bound once the
// faults are over and the backends answer; it cannot promise more while the
// store refuses the reads that carry the message.
func settledBy(from time.Time, bound time.Duration, outages []backendOutage) time.Time {
	t := from
	for {
		moved := false
		for _, o := range outages {
			if o.start.Before(t.Add(bound)) && o.end.After(t) {
				t, moved = o.end, true
			}
		}
		if !moved {
			return t.Add(bound)
		}
	}
}

// outageSummary says, per service, how many outages the nodes logged, their
// total and longest, and when the last ended; "" when none.
func outageSummary(outages []backendOutage, start time.Time) string {
	type sum struct {
		n              int
		total, longest time.Duration
		last           time.Time
	}
	by := map[string]*sum{}
	for _, o := range outages {
		s := by[o.service]
		if s == nil {
			s = &sum{}
			by[o.service] = s
		}
		d := o.end.Sub(o.start)
		s.n++
		s.total += d
		s.longest = max(s.longest, d)
		if o.end.After(s.last) {
			s.last = o.end
		}
	}
	var lines []string
	for svc, s := range by {
		lines = append(lines, fmt.Sprintf("  %-9s %3d outages on the nodes, %6.1fs in all, longest %5.1fs, the last ended at %5.1fs",
			svc, s.n, s.total.Seconds(), s.longest.Seconds(), s.last.Sub(start).Seconds()))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

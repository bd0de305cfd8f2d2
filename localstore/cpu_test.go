package localstore

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU adds the process's CPU time per operation (user and system,
// every thread) to a benchmark's result, beside its wall time: a commit that
// waits on a disk sync costs wall time and little CPU, and the two answer
// different questions (how long a burst takes, what it takes from a busy
// machine). Call it after b.ResetTimer, as the benchmark's first line.
func reportCPU(b *testing.B) {
	start := cpuTime(b)
	b.Cleanup(func() {
		if b.N > 0 {
			b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
		}
	})
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

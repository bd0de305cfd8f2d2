//go:build linux && cgo

package timerslack

/*
#include <errno.h>
#include <stdlib.h>
#include <sys/prctl.h>

// maxSlackUS is MaxSlackUS (env.go).
#define maxSlackUS 1000000UL

// chat_timerslack runs before main, and so before the Go runtime starts any
// thread of its own. It takes what CheckEnv (env.go) accepts and leaves the
// slack alone otherwise.
__attribute__((constructor)) static void chat_timerslack(void) {
	unsigned long us = 1000;
	const char *v = getenv("CHAT_TIMER_SLACK_US");
	if (v != NULL && *v != '\0') {
		// Digits only: strtoul would take "-1" as the largest number.
		const char *c;
		for (c = v; *c != '\0'; c++) {
			if (*c < '0' || *c > '9') {
				return; // not a number: leave the slack as inherited
			}
		}
		errno = 0;
		us = strtoul(v, NULL, 10);
		if (errno == ERANGE || us > maxSlackUS) {
			return;
		}
	}
	if (us == 0) {
		return;
	}
	prctl(PR_SET_TIMERSLACK, us * 1000UL, 0, 0, 0);
}
*/
import "C"

import (
	"syscall"
	"time"
)

// Slack is the calling thread's timer slack (prctl's int result would cut a
// slack of 2^31 ns or more, so the system call is made directly).
func Slack() time.Duration {
	ns, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_TIMERSLACK, 0, 0)
	return time.Duration(ns)
}

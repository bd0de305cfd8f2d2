//go:build linux && cgo

package timerslack

/*
#include <stdlib.h>
#include <sys/prctl.h>

// chat_timerslack runs before main, and so before the Go runtime starts any
// thread of its own.
__attribute__((constructor)) static void chat_timerslack(void) {
	unsigned long us = 1000;
	const char *v = getenv("CHAT_TIMER_SLACK_US");
	if (v != NULL && *v != '\0') {
		char *end;
		unsigned long n = strtoul(v, &end, 10);
		if (*end != '\0') {
			return; // not a number: leave the slack as inherited
		}
		us = n;
	}
	if (us == 0) {
		return;
	}
	prctl(PR_SET_TIMERSLACK, us * 1000UL, 0, 0, 0);
}

static long chat_timerslack_get(void) {
	return prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
}
*/
import "C"

import "time"

// Slack is the calling thread's timer slack.
func Slack() time.Duration { return time.Duration(C.chat_timerslack_get()) }

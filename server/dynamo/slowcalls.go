package dynamo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"
)

// A call that times out while DynamoDB answers other calls is slow, not a
// DynamoDB fault: it waited behind the others (a loaded node, this process's
// own queue for moto's writes, a test server that serves one request at a
// time and stalls while it copies its tables). Counting it against the
// breaker opened the circuit with no fault at all — under load every call in
// flight times out together, five in a row — and refused every request for
// OpenFor. So the breaker counts a timeout only when DynamoDB answered no
// call from the timed-out call's start until judgeGrace after its end: a hung
// or unreachable DynamoDB answers none; a stall that ends within the grace is
// not an outage. The caller is answered with the timeout at once
// (maybe_stored for a send); only the breaker's verdict waits, so a hung
// DynamoDB opens the circuit about judgeGrace later than it would otherwise.
type answerClock struct {
	answers atomic.Uint64 // calls DynamoDB answered (an item, or a refusal on the request's merits)
	slow    prometheus.Counter
}

// errSlowNotDown reports a slow call to the breaker as excluded: not counted.
var errSlowNotDown = errors.New("dynamodb: call timed out while others were answered")

func newAnswerClock(reg prometheus.Registerer) (*answerClock, error) {
	c := &answerClock{slow: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "chat_dynamodb_slow_calls_total",
		Help: "DynamoDB calls that ran past --dynamodb-timeout while DynamoDB answered others: failed, but not counted by the circuit breaker.",
	})}
	if reg == nil {
		return c, nil
	}
	if err := reg.Register(c.slow); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, fmt.Errorf("register slow calls counter: %w", err)
		}
		if existing, ok := are.ExistingCollector.(prometheus.Counter); ok {
			c.slow = existing
		}
	}
	return c, nil
}

// judgeGrace is how long after a call timed out with nothing answered
// meanwhile an answer to another call still excuses it: twice the call
// timeout.
func judgeGrace(callTimeout time.Duration) time.Duration { return 2 * callTimeout }

// start is taken before a call.
func (c *answerClock) start() uint64 { return c.answers.Load() }

// verdict is what to report to the breaker for a call started at started
// that ended with err; wait says it cannot be told yet (a timeout with no
// answer seen since the call started: ask again after the grace).
func (c *answerClock) verdict(started uint64, err error, final bool) (report error, wait bool) {
	if err == nil || (!isFailure(err) && !errors.Is(err, context.Canceled)) {
		c.answers.Add(1)
		return err, false
	}
	if !timedOut(err) {
		return err, false
	}
	if c.answers.Load() != started {
		c.slow.Inc()
		return errSlowNotDown, false
	}
	return err, !final
}

// timedOut: the call's deadline passed, or an attempt's wait for the
// response's headers did (net/http's ResponseHeaderTimeout).
func timedOut(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// report tells the breaker of a call's end: at once, or, for a timeout that
// saw no answer, after the grace (slowcalls.go's top comment). Close ends
// the wait and reports what is known then.
func (s *Store) report(started uint64, err error, done func(error)) {
	verdict, wait := s.ans.verdict(started, err, false)
	if !wait || s.cb.State() != gobreaker.StateClosed {
		// Half-open, the call was a probe, and the others are refused:
		// no answer can come to excuse it.
		done(verdict)
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		t := time.NewTimer(judgeGrace(s.o.CallTimeout))
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.closing:
		}
		verdict, _ := s.ans.verdict(started, err, true)
		done(verdict)
	}()
}

// Package breaker builds the circuit breakers the production backends put around
// DynamoDB and Redis (open on a sustained error rate, fail fast while
// open, probe half-open, close on recovery), on github.com/sony/gobreaker/v2, with
// each breaker's state exported as chat_circuit_breaker_state{service}.
package breaker

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"
)

// Options tune a breaker. Zero fields take the defaults the backend passes to New.
type Options struct {
	// Window is the rolling window the error rate is measured over.
	Window time.Duration
	// MinRequests is how many requests the window needs before the error rate
	// counts, so one failure at night does not open the circuit.
	MinRequests uint32
	// FailureRatio opens the circuit when reached within the window.
	FailureRatio float64
	// ConsecutiveFailures opens it regardless of volume [5]: with little traffic
	// a dead service would otherwise keep costing a timeout per call.
	ConsecutiveFailures uint32
	// OpenFor is how long the circuit fails fast before letting probes through [5s].
	OpenFor time.Duration
	// Probes is how many requests half-open lets through; that many successes close
	// the circuit, one failure opens it again [3].
	Probes uint32
	// Now is the clock of the outage lines (tests); nil: time.Now.
	Now func() time.Time
}

// Breaker is a two-step circuit breaker (Allow before a call, then report its
// error) that also tells the log about outages: one WARN line when calls start
// failing (refused, reset, timing out), with the error, and one INFO line when
// the service answers again, with how long it was out and how many calls failed
// or were refused meanwhile. The lines follow the calls, not the circuit: a
// node with little traffic (a registry heartbeat every 5 s) never fails five
// calls in a row within the window, so its circuit stays closed through a long
// outage, and logging only its opening left such nodes silent. Calls
// themselves log nothing: a request per line during an outage would bury
// everything else (and the Service answers each with a retry hint).
//
// A failure soon after an outage ended (within quiet) is logged only once the
// calls have failed for linger, or the circuit opens: a service that fails
// now and then under heavy traffic would otherwise write two lines per failure.
type Breaker struct {
	cb   *gobreaker.TwoStepCircuitBreaker[struct{}]
	name string
	log  *slog.Logger
	now  func() time.Time

	circuit atomic.Int32 // the circuit's state, as OnStateChange last set it
	failing atomic.Bool  // b.out, read without the lock by every call that succeeds

	mu      sync.Mutex
	out     bool      // calls are failing: an outage is under way
	logged  bool      // its WARN line is written
	since   time.Time // the outage's first failure
	ended   time.Time // when the last outage ended
	lastErr string    // its last failure
	failed  int64     // calls that failed in it
	refused atomic.Int64
}

// quiet and linger shape the outage lines (see Breaker).
const (
	quiet  = time.Minute
	linger = time.Second
)

// State is a breaker's state.
type State = gobreaker.State

// ErrOpen is what Allow returns while the circuit is open.
var ErrOpen = gobreaker.ErrOpenState

// New builds a breaker named name (the gauge's service label and the log's).
// Fields of o left zero come from defaults, then from the package defaults.
// isFailure says which errors count against the service (a missing item does
// not); excluded errors do not count at all (a cancelled context).
func New(name string, o, defaults Options, reg prometheus.Registerer, log *slog.Logger, isFailure, excluded func(error) bool) (*Breaker, error) {
	o = fill(o, defaults)
	g, err := stateGauge(reg)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Breaker{name: name, log: log, now: o.Now}
	if b.now == nil {
		b.now = time.Now
	}
	gauge := g.WithLabelValues(name)
	gauge.Set(0)
	b.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:         name,
		MaxRequests:  o.Probes,
		Interval:     o.Window,
		BucketPeriod: o.Window / 10,
		Timeout:      o.OpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			var why string
			switch {
			case c.ConsecutiveFailures >= o.ConsecutiveFailures:
				why = fmt.Sprintf("%d calls in a row failed", c.ConsecutiveFailures)
			case c.Requests >= o.MinRequests && float64(c.TotalFailures) >= o.FailureRatio*float64(c.Requests):
				why = fmt.Sprintf("%d of %d calls failed within %s", c.TotalFailures, c.Requests, o.Window)
			default:
				return false
			}
			b.opened(why)
			return true
		},
		OnStateChange: func(_ string, from, to gobreaker.State) {
			gauge.Set(gaugeValue(to))
			b.circuit.Store(int32(to))
			if to == gobreaker.StateClosed {
				b.answered()
			}
		},
		IsSuccessful: func(err error) bool {
			if err == nil || !isFailure(err) {
				// Half-open, the outage ends when the probes have closed the
				// circuit (OnStateChange), not at the first probe that answers.
				if gobreaker.State(b.circuit.Load()) == gobreaker.StateClosed {
					b.answered()
				}
				return true
			}
			b.failure(err)
			return false
		},
		IsExcluded: excluded,
	})
	return b, nil
}

// Allow asks to make a call; done reports its error. While the circuit is open
// it refuses at once with ErrOpen.
func (b *Breaker) Allow() (done func(error), err error) {
	done, err = b.cb.Allow()
	if err != nil {
		b.refused.Add(1)
	}
	return done, err
}

// State is the circuit's state now.
func (b *Breaker) State() State { return b.cb.State() }

// failure counts a failed call into the outage, starting one (and writing its
// WARN line, unless one ended within quiet and this one is younger than
// linger) if none is under way.
func (b *Breaker) failure(err error) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.out {
		b.out, b.logged, b.since, b.failed = true, false, now, 0
		b.failing.Store(true)
		b.refused.Store(0)
	}
	b.failed++
	b.lastErr = err.Error()
	if !b.logged && (b.ended.IsZero() || now.Sub(b.ended) >= quiet || now.Sub(b.since) >= linger) {
		b.warnLocked("")
	}
}

// opened writes the outage's WARN line, if not yet written, when the circuit
// opens (ReadyToTrip: the failure that tipped it is counted already).
func (b *Breaker) opened(why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.out && !b.logged {
		b.warnLocked(why)
	}
}

func (b *Breaker) warnLocked(why string) {
	b.logged = true
	attrs := []any{"service", b.name, "last_error", b.lastErr}
	if why != "" {
		attrs = append(attrs, "why", why)
	}
	b.log.Warn(b.name+" is failing: calls are refused or time out", attrs...)
}

// answered ends the outage under way, if any: a call succeeded with the
// circuit closed. Its INFO line is written if its WARN line was. Half-open
// probes that fail reopen the circuit within the same outage: no new line.
func (b *Breaker) answered() {
	if !b.failing.Load() {
		return
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.out {
		return
	}
	b.out = false
	b.failing.Store(false)
	b.ended = now
	if b.logged {
		b.log.Info(b.name+" answers again", "service", b.name,
			"out_for", now.Sub(b.since).Round(time.Millisecond),
			"failed_calls", b.failed, "refused_calls", b.refused.Load())
	}
}

func fill(o, d Options) Options {
	pick := func(v, def, fallback time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		if def > 0 {
			return def
		}
		return fallback
	}
	pickN := func(v, def, fallback uint32) uint32 {
		if v > 0 {
			return v
		}
		if def > 0 {
			return def
		}
		return fallback
	}
	o.Window = pick(o.Window, d.Window, 10*time.Second)
	o.OpenFor = pick(o.OpenFor, d.OpenFor, 5*time.Second)
	o.MinRequests = pickN(o.MinRequests, d.MinRequests, 20)
	o.ConsecutiveFailures = pickN(o.ConsecutiveFailures, d.ConsecutiveFailures, 5)
	o.Probes = pickN(o.Probes, d.Probes, 3)
	if o.FailureRatio <= 0 {
		o.FailureRatio = d.FailureRatio
		if o.FailureRatio <= 0 {
			o.FailureRatio = 0.5
		}
	}
	return o
}

// stateGauge is shared by every breaker of a registry (one series per service):
// the second backend to register reuses the first one's collector.
func stateGauge(reg prometheus.Registerer) (*prometheus.GaugeVec, error) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "chat_circuit_breaker_state",
		Help: "State of the circuit breaker around a backing service: 0 closed, 1 half-open, 2 open.",
	}, []string{"service"})
	if reg == nil {
		return g, nil
	}
	if err := reg.Register(g); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*prometheus.GaugeVec); ok {
				return existing, nil
			}
		}
		return nil, fmt.Errorf("register breaker gauge: %w", err)
	}
	return g, nil
}

func gaugeValue(s gobreaker.State) float64 {
	switch s {
	case gobreaker.StateHalfOpen:
		return 1
	case gobreaker.StateOpen:
		return 2
	}
	return 0
}

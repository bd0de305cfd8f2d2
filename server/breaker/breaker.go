// Package breaker builds the circuit breakers the production backends put around
// DynamoDB and Redis (seed 003: open on a sustained error rate, fail fast while
// open, probe half-open, close on recovery), on github.com/sony/gobreaker/v2, with
// each breaker's state exported as chat_circuit_breaker_state{service}.
package breaker

import (
	"errors"
	"fmt"
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
}

// Breaker is a two-step breaker: Allow before a call, then report its error.
type Breaker = gobreaker.TwoStepCircuitBreaker[struct{}]

// State is a breaker's state.
type State = gobreaker.State

// ErrOpen is what Allow returns while the circuit is open.
var ErrOpen = gobreaker.ErrOpenState

// New builds a breaker named name (the gauge's service label). Fields of o left
// zero come from defaults, then from the package defaults. isFailure says which
// errors count against the service (a missing item does not); excluded errors do
// not count at all (a cancelled context).
func New(name string, o, defaults Options, reg prometheus.Registerer, isFailure, excluded func(error) bool) (*Breaker, error) {
	o = fill(o, defaults)
	g, err := stateGauge(reg)
	if err != nil {
		return nil, err
	}
	gauge := g.WithLabelValues(name)
	gauge.Set(0)
	return gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:         name,
		MaxRequests:  o.Probes,
		Interval:     o.Window,
		BucketPeriod: o.Window / 10,
		Timeout:      o.OpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			if c.ConsecutiveFailures >= o.ConsecutiveFailures {
				return true
			}
			return c.Requests >= o.MinRequests && float64(c.TotalFailures) >= o.FailureRatio*float64(c.Requests)
		},
		OnStateChange: func(_ string, _, to gobreaker.State) { gauge.Set(gaugeValue(to)) },
		IsSuccessful:  func(err error) bool { return err == nil || !isFailure(err) },
		IsExcluded:    excluded,
	}), nil
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

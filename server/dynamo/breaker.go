package dynamo

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"
)

// BreakerOptions tune the circuit breaker around DynamoDB. Zero fields take the
// defaults in brackets.
type BreakerOptions struct {
	// Window is the rolling window the error rate is measured over [30s].
	Window time.Duration
	// MinRequests is how many requests the window needs before the error rate
	// counts, so one failure at night does not open the circuit [100].
	MinRequests uint32
	// FailureRatio opens the circuit when reached within the window [0.01: seed 003's SLO-driven 1% over 30 s].
	FailureRatio float64
	// ConsecutiveFailures opens it regardless of volume [5]: with little traffic
	// a dead endpoint would otherwise keep costing a timeout per call.
	ConsecutiveFailures uint32
	// OpenFor is how long the circuit fails fast before letting probes through [5s].
	OpenFor time.Duration
	// Probes is how many requests half-open lets through; that many successes close
	// the circuit, one failure opens it again [3].
	Probes uint32
}

// stateGauge is shared by every breaker of the process (one series per name).
// The redis and dynamo packages declare it identically (each package knows nothing of the other), so whichever registers
// second reuses the first's collector.
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

// newBreaker builds a two-step breaker (no closure per call) whose state is
// mirrored in the gauge. isFailure says which errors count against the service.
func newBreaker(name string, o BreakerOptions, reg prometheus.Registerer, isFailure func(error) bool, excluded func(error) bool) (*gobreaker.TwoStepCircuitBreaker[struct{}], error) {
	if o.Window <= 0 {
		o.Window = 30 * time.Second
	}
	if o.MinRequests == 0 {
		o.MinRequests = 100
	}
	if o.FailureRatio <= 0 {
		o.FailureRatio = 0.01
	}
	if o.ConsecutiveFailures == 0 {
		o.ConsecutiveFailures = 5
	}
	if o.OpenFor <= 0 {
		o.OpenFor = 5 * time.Second
	}
	if o.Probes == 0 {
		o.Probes = 3
	}
	g, err := stateGauge(reg)
	if err != nil {
		return nil, err
	}
	gauge := g.WithLabelValues(name)
	gauge.Set(0)
	bucket := o.Window / 10
	return gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:         name,
		MaxRequests:  o.Probes,
		Interval:     o.Window,
		BucketPeriod: bucket,
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

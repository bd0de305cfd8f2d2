//go:build !race

package faulttest

const raceDetector = false

//go:build race

package faulttest

// The race detector keeps shadow memory beside every page a program
// writes, and its first touch of each is a fault of its own.
const raceDetector = true

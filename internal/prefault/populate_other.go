//go:build !linux

package prefault

import "errors"

func populate(start, n uintptr) error {
	return errors.ErrUnsupported
}

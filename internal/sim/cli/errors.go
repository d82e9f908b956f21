// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import "errors"

// The exit status rule of cmd/gpuplane: 2 for a usage error or bad input
// (an option refused, an input file missing or refused), 1 for a run that
// failed once its inputs were read (a report not written), 130 when
// interrupted. BadInput marks the errors of the first kind.

// inputError is an error of the options or of an input.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// BadInput marks err (nil stays nil) as a usage error or bad input: exit
// status 2. The message is err's.
func BadInput(err error) error {
	if err == nil || IsBadInput(err) {
		return err
	}
	return inputError{err}
}

// IsBadInput reports whether err, or an error it wraps, was marked by
// BadInput.
func IsBadInput(err error) bool {
	var e inputError
	return errors.As(err, &e)
}

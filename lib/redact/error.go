package redact

// Error is an error whose message has known secrets masked. Unwrap returns
// the original, so errors.Is and errors.As (apierrors.IsInvalid, ...) see
// through it; only the printed message changes.
type Error struct {
	// Err is the original error.
	Err error
	// Values are the secrets to mask.
	Values *Values
}

// Error returns Err's message with the values masked.
func (e *Error) Error() string { return e.Values.String(e.Err.Error()) }

// Unwrap returns the original error.
func (e *Error) Unwrap() error { return e.Err }

// Wrap returns err with its message masked by v; nil stays nil, and an
// empty v leaves err as it is.
func Wrap(err error, v *Values) error {
	if err == nil || v.Len() == 0 {
		return err
	}
	return &Error{Err: err, Values: v}
}

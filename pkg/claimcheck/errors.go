package claimcheck

import "fmt"

// MalformedPointerError is a message marked as a pointer whose body is not one. It is
// permanent (see idempotency.IsPermanent): no retry can read it.
type MalformedPointerError struct{ Reason string }

func (e *MalformedPointerError) Error() string { return "claim check: malformed pointer: " + e.Reason }

func (e *MalformedPointerError) Permanent() bool { return true }

// ObjectError is a pointer whose object can never be read as a payload: missing (expired, or
// never written), too large for the bound, or in a bucket the Reader does not read. It is
// permanent (see idempotency.IsPermanent), and its text names the object.
type ObjectError struct {
	Pointer Pointer
	Reason  string
}

func (e *ObjectError) Error() string { return fmt.Sprintf("claim check %s: %s", e.Pointer, e.Reason) }

func (e *ObjectError) Permanent() bool { return true }

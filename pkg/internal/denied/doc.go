// Package denied recognises an AWS call refused for want of a permission, in any error an SDK
// client returns, and logs and counts it the one way every part of the engine does: the
// deployment's fault, never the message's.
package denied

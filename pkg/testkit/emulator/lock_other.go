//go:build !unix

package emulator

// lock does nothing where there is no flock: two installs at once may both run npm ci.
func lock(path string) (func(), error) { return func() {}, nil }

// Package child starts processes that end with the process that started them, however it
// ends: a test binary's emulators, a local cloud's processes. On Linux, Start gives the child
// the parent-death signal from a thread that lives as long as the process, and DieWithParent
// asks the same for the calling process. Elsewhere both do only what the platform can.
package child

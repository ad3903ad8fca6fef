// Package reap keeps the processes of a run from outliving it. A run is a command and every
// process it starts, however deep: make test's emulators, test binaries, local clouds, the
// Runtime Interface Emulator and the bootstraps it runs, SPIN's pan, Chromium.
//
// Two mechanisms, one prompt and one complete. The prompt one is the engine's (package
// pkg/testkit/child): a child started with Linux's parent-death signal dies with the process
// that started it, even one killed with SIGKILL. The complete one is here: Mark puts a run's id
// in an environment variable that every descendant inherits; Find reads it back from /proc and
// Sweep ends every process that carries it, whatever became of its parent (a daemon in its own
// session, an orphan of a killed test binary).
package reap

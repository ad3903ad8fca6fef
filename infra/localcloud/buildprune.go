package localcloud

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// sourceFile names, in a build cache entry, the main package directory the entry is built from.
const sourceFile = "source"

// pruneBuilds removes the entries of the build cache under functions whose main package
// directory no longer exists (a project in a temporary directory, gone with its test), so that
// the user's cache does not grow with every such project. An entry another cloud holds locked
// is left for a later prune.
func pruneBuilds(functions string) {
	entries, _ := os.ReadDir(functions)
	for _, e := range entries {
		entry := filepath.Join(functions, e.Name())
		src, err := os.ReadFile(filepath.Join(entry, sourceFile))
		if err != nil {
			continue // an entry being written, or one of an older layout: kept
		}
		if _, err := os.Stat(string(src)); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		f, err := os.Open(filepath.Join(entry, "lock"))
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			_ = os.RemoveAll(entry)
		}
		f.Close()
	}
}

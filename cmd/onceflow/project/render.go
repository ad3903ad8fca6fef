package project

import (
	"bytes"
	"embed"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

//go:embed templates/*.tmpl
var templates embed.FS

var tmpl = template.Must(template.ParseFS(templates, "templates/*.tmpl"))

// file is one file to write: its path in the project and the template that writes it.
type file struct{ path, template string }

// render executes each file's template with data: a Go file is gofmt'ed.
func render(files []file, data any) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range files {
		var b bytes.Buffer
		if err := tmpl.ExecuteTemplate(&b, f.template, data); err != nil {
			return nil, fmt.Errorf("template %s: %w", f.template, err)
		}
		src := b.Bytes()
		if strings.HasSuffix(f.path, ".go") {
			var err error
			if src, err = format.Source(src); err != nil {
				return nil, fmt.Errorf("%s: %w", f.path, err)
			}
		}
		out[f.path] = src
	}
	return out, nil
}

// write writes files under dir, refusing to replace any but those of replace, and prints each
// path written to log.
func write(dir string, files map[string][]byte, replace map[string]bool, log func(string)) error {
	for path := range files {
		if _, err := os.Stat(filepath.Join(dir, path)); err == nil && !replace[path] {
			return fmt.Errorf("%s exists: choose another name", filepath.Join(dir, path))
		}
	}
	for _, path := range sortedKeys(files) {
		full := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, files[path], 0o644); err != nil {
			return err
		}
		log(path)
	}
	return nil
}

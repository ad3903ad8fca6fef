package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"text/template"
)

//go:embed templates/*.tmpl
var templates embed.FS

var tmpl = template.Must(template.ParseFS(templates, "templates/*.tmpl"))

// scaffold writes the consumer's files under root and splices its part into root/template.yaml;
// it returns the files written. Nothing is written unless every part could be made.
func (c *consumer) scaffold(root string, newType bool) ([]string, error) {
	files := map[string][]byte{}
	for path, name := range map[string]string{
		filepath.Join("internal", c.Pkg, c.Pkg+".go"):      "handler.go.tmpl",
		filepath.Join("internal", c.Pkg, c.Pkg+"_test.go"): "handler_test.go.tmpl",
		filepath.Join("functions", c.Name, "main.go"):      "main.go.tmpl",
	} {
		src, err := c.execute(name)
		if err != nil {
			return nil, err
		}
		if files[path], err = format.Source(src); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	for _, dir := range []string{filepath.Join("internal", c.Pkg), filepath.Join("functions", c.Name)} {
		if _, err := os.Stat(filepath.Join(root, dir)); !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s exists: choose another name", dir)
		}
	}
	tpl, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		return nil, err
	}
	if err := c.checkTypes(string(tpl), newType); err != nil {
		return nil, err
	}
	sample, err := c.sample(root)
	if err != nil {
		return nil, err
	}
	files[filepath.Join("events", c.Name+"-batch.json")] = sample
	if files["template.yaml"], err = c.splice(tpl); err != nil {
		return nil, fmt.Errorf("template.yaml: %w", err)
	}
	var written []string
	for _, path := range []string{filepath.Join("internal", c.Pkg, c.Pkg+".go"), filepath.Join("internal", c.Pkg, c.Pkg+"_test.go"),
		filepath.Join("functions", c.Name, "main.go"), filepath.Join("events", c.Name+"-batch.json"), "template.yaml"} {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return written, err
		}
		if err := os.WriteFile(full, files[path], 0o644); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

func (c *consumer) execute(name string) ([]byte, error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, name, c); err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// Command newconsumer scaffolds a consumer of the application's events (make consumer NAME=...
// TYPE=...): its handler and test under internal/<pkg>/, its main under functions/<name>/, a
// sample batch under events/, and its part of template.yaml, spliced in where each part goes.
// It refuses a name already taken and leaves every file as it was on any error. See
// docs/consumer.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	name := flag.String("name", "", "the consumer's name, lower-case words joined by '-' (word-count): CONSUMER_NAME")
	types := flag.String("type", "", "the event types it consumes, comma-separated (note.created)")
	dir := flag.String("dir", ".", "the repository's root")
	flag.Parse()
	c, err := newConsumer(*name, strings.Split(*types, ","))
	if err == nil {
		var written []string
		written, err = c.scaffold(*dir)
		for _, f := range written {
			fmt.Println("wrote", f)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "newconsumer:", err)
		os.Exit(1)
	}
}

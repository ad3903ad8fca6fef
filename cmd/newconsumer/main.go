// Command newconsumer scaffolds a consumer of the application's events (make consumer NAME=...
// TYPE=...): its handler and test under internal/<pkg>/, its main under functions/<name>/, a
// sample batch under events/, and its part of template.yaml, spliced in where each part goes.
// It refuses a name already taken and an event type no producer publishes (unless -new-type),
// and leaves every file as it was on any error. With -remove it takes a consumer it wrote out
// again (make remove-consumer NAME=...). See docs/consumer.md.
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
	newType := flag.Bool("new-type", false, "accept an event type no producer publishes yet")
	remove := flag.Bool("remove", false, "remove the consumer make consumer wrote: its files and its part of template.yaml")
	dir := flag.String("dir", ".", "the repository's root")
	flag.Parse()
	if err := run(*dir, *name, *types, *newType, *remove); err != nil {
		fmt.Fprintln(os.Stderr, "newconsumer:", err)
		os.Exit(1)
	}
}

func run(dir, name, types string, newType, remove bool) error {
	if remove {
		c, err := newConsumer(name, nil)
		if err != nil {
			return err
		}
		removed, err := c.remove(dir)
		for _, f := range removed {
			fmt.Println("removed", f)
		}
		return err
	}
	c, err := newConsumer(name, strings.Split(types, ","))
	if err != nil {
		return err
	}
	written, err := c.scaffold(dir, newType)
	for _, f := range written {
		fmt.Println("wrote", f)
	}
	return err
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/onceflow/onceflow/cmd/onceflow/project"
)

// projectCommands are the commands that write a project of one's own consumers: they call no
// AWS service and take none of the target flags.
var projectCommands = map[string]func(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error{
	"init":         initProject,
	"add-consumer": addConsumer,
}

// runProject runs the project command name with args and returns the exit status.
func runProject(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("onceflow "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	err := projectCommands[name](ctx, fs, args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return status(name, err, fs, stderr)
}

func initProject(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	var o project.Options
	fs.StringVar(&o.Module, "module", "", "the project's Go module path (example.com/shop)")
	fs.StringVar(&o.Queue, "queue", "", "the first consumer's name, its queue's (orders)")
	fs.StringVar(&o.Event, "event", "", "the event type it applies (order.placed)")
	fs.StringVar(&o.Engine, "engine", "", "the engine's directory, a clone's pkg/ (default: the checkout this onceflow was built from)")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || o.Module == "" || o.Queue == "" || o.Event == "" {
		return usageError("want DIR --module M --queue Q --event TYPE")
	}
	o.Dir = rest[0]
	if err := project.Init(ctx, o, func(path string) { fmt.Fprintln(out, "wrote", path) }); err != nil {
		return err
	}
	fmt.Fprintf(out, "next: cd %s && make test && make run\n", o.Dir)
	return nil
}

func addConsumer(_ context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	var queue, event string
	fs.StringVar(&queue, "queue", "", "the consumer's name, its queue's (refunds)")
	fs.StringVar(&event, "event", "", "the event type it applies (refund.issued)")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 || queue == "" || event == "" {
		return usageError("want [DIR] --queue Q --event TYPE")
	}
	dir := "."
	if len(rest) == 1 {
		dir = rest[0]
	}
	return project.Add(dir, queue, event, func(path string) { fmt.Fprintln(out, "wrote", path) })
}

package main

import (
	"fmt"
	"io"
)

// exitClosedPipe is the exit status when the reader of the tool's output left (onceflow dlq
// list | head -1): 128+SIGPIPE, what a shell reports for a program a closed pipe ended.
const exitClosedPipe = 141

// output is the tool's standard output; it keeps its first write error and fails every write
// after it, so that a command stops where it checks (ioStreams.failed) and the tool exits
// with it.
type output struct {
	w   io.Writer
	err error // the first write error
}

func (o *output) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = fmt.Errorf("write output: %w", err)
	}
	return n, err
}

// failed is the first error writing s.out, nil while there is none.
func (s ioStreams) failed() error {
	if o, ok := s.out.(*output); ok {
		return o.err
	}
	return nil
}

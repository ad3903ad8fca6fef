package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// logsCmd prints a function's log lines, every environment merged in time order, without the
// emulator's own lines; with -f it then follows them until interrupted.
func logsCmd(args []string) error {
	fs := flag.NewFlagSet("logs", flag.ContinueOnError)
	state := fs.String("state", ".local", "state directory")
	follow := fs.Bool("f", false, "follow: print new lines as they are written, until Ctrl-C")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ids := localcloud.LogFunctions(*state)
	if len(ids) == 0 {
		return fmt.Errorf("no function logs in %s/logs: `localcloud up` or `localcloud run` first (in this repository: make up, make run)", *state)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: make logs FN=<function> [FOLLOW=1]; functions: %s", strings.Join(ids, ", "))
	}
	id, err := localcloud.ResolveFunction(ids, fs.Arg(0))
	if err != nil {
		return err
	}
	offsets := sizes(localcloud.LogFiles(*state, id))
	lines, err := localcloud.ReadLogs(*state, id)
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Println(l.Format())
	}
	if !*follow {
		if len(lines) == 0 {
			fmt.Fprintf(os.Stderr, "%s has logged nothing in this run yet\n", id)
		}
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return followLogs(ctx, *state, id, offsets, os.Stdout)
}

func sizes(files map[string]string) map[string]int64 {
	out := map[string]int64{}
	for _, path := range files {
		if st, err := os.Stat(path); err == nil {
			out[path] = st.Size()
		}
	}
	return out
}

// followLogs prints the complete lines appended to the function's log files after offsets,
// every 250 ms, those of all environments merged in time order, starting a file over when it
// shrinks (a new `make up` emptied it).
func followLogs(ctx context.Context, state, id string, offsets map[string]int64, w io.Writer) error {
	last := map[string]time.Time{} // per environment, the time of its last line printed
	for {
		var lines []localcloud.LogLine
		for env, path := range localcloud.LogFiles(state, id) {
			ls, err := readNew(env, path, offsets, last[env])
			if err != nil {
				return err
			}
			if len(ls) > 0 {
				last[env] = ls[len(ls)-1].Time
			}
			lines = append(lines, ls...)
		}
		sort.SliceStable(lines, func(i, j int) bool {
			if !lines[i].Time.Equal(lines[j].Time) {
				return lines[i].Time.Before(lines[j].Time)
			}
			return lines[i].Env < lines[j].Env // one environment's lines stay together
		})
		for _, l := range lines {
			fmt.Fprintln(w, l.Format())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// readNew parses the complete lines appended to path after its offset; a text line ahead of
// their first record takes before, the time of the environment's last line.
func readNew(env, path string, offsets map[string]int64, before time.Time) ([]localcloud.LogLine, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := offsets[path]
	if st.Size() < off {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	end := bytes.LastIndexByte(buf, '\n') + 1 // complete lines only
	offsets[path] = off + int64(end)
	return localcloud.ParseLog(env, bytes.NewReader(buf[:end]), before, st.ModTime())
}

package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// up starts `localcloud serve` detached, in its own session, and waits until it is ready.
func up(args []string) error {
	var o options
	if _, err := o.flags("up", args); err != nil {
		return err
	}
	if pid, ok := localcloud.Running(o.state); ok {
		return fmt.Errorf("already up (supervisor pid %d): run `localcloud down` first (in this repository: make down)", pid)
	}
	if _, err := o.config(); err != nil { // refuse bad -envs and -param before starting anything
		return err
	}
	logs := filepath.Join(o.state, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(o.state, "endpoints.json"))
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(logs, "localcloud.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(self, append([]string{"serve"}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Fprintf(os.Stderr, "localcloud: starting (supervisor pid %d, log %s)\n", cmd.Process.Pid, logPath)
	deadline := time.After(10 * time.Minute)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("local cloud failed to start (%v):\n%s", err, tail(logPath, 30))
		case <-deadline:
			_ = localcloud.Down(o.state)
			return fmt.Errorf("local cloud not ready after 10 minutes, see %s", logPath)
		case <-time.After(100 * time.Millisecond):
		}
		s, err := localcloud.ReadState(o.state)
		if err != nil || s.Supervisor != cmd.Process.Pid {
			continue
		}
		ep, err := localcloud.ReadEndpoints(o.state)
		if err != nil {
			continue
		}
		fmt.Printf("local cloud up: API %s, Lambda %s, DynamoDB %s, SQS %s\n", cmp.Or(ep.APIURL, "none"), ep.LambdaURL, ep.DynamoDB, ep.SQS)
		if ep.APIURL != "" {
			fmt.Printf("tokens: POST %s {\"sub\":\"alice\",\"scope\":\"notes.write notes.read\"}\n", ep.TokenURL)
		}
		fmt.Printf("endpoints: %s\n", filepath.Join(o.state, "endpoints.json"))
		fmt.Println(gateLine(ep))
		if ep.Gatekeeper != "" {
			if st, err := ep.ReadStats(context.Background()); err == nil && st.Access != nil {
				for _, d := range st.Access.Denials { // a poller's call refused as the cloud started
					fmt.Printf("DENIED %s\n", d.Explain())
				}
			}
			fmt.Printf("a call the gatekeeper refuses: `localcloud invoke` (in this repository: make invoke) prints those of its invocation, %s logs each as it happens (DENIED)\n", logPath)
		}
		return nil
	}
}

// gateLine says where the functions' calls are authorised, and as whom one can call there.
func gateLine(ep localcloud.Endpoints) string {
	if ep.Gatekeeper == "" {
		return "gatekeeper: off (-ungated): the functions reach the emulators directly, nothing is authorised"
	}
	names := make([]string, 0, len(ep.Principals))
	for n := range ep.Principals {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Sprintf("gatekeeper: %s authorises every call of the functions and pollers as their role (principals in endpoints.json: %s)",
		ep.Gatekeeper, strings.Join(names, ", "))
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

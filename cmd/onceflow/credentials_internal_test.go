package main

import (
	"bytes"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// listener accepts connections on loopback and closes them at once, counting them: a dead
// endpoint that tells whether anything tried to reach it.
func listener(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return "http://" + l.Addr().String(), &n
}

// runBare runs the binary with nothing but env: no credentials, no shared config files (HOME
// is empty), the instance metadata service and every other AWS endpoint (through a proxy)
// pointing at dead listeners.
func runBare(t *testing.T, bin string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, env...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// Without credentials, and without --local, the tool says so in one line, naming how to give
// them, and makes no call at all: the SDK's chain never falls through to the EC2 instance
// metadata service (which printed an IMDSv1 warning and retried for seconds), and no request
// leaves for AWS, with --stack or an explicit endpoint as without. On EC2 --imds lets the
// chain ask the instance metadata service.
func TestOnceflow_without_credentials_says_so_in_one_line_and_calls_nothing(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "onceflow")
	goCmd(t, "build", "-o", bin, ".")
	imds, imdsHits := listener(t)
	proxy, proxyHits := listener(t)
	endpoint, endpointHits := listener(t)
	env := []string{"AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds, "HTTPS_PROXY=" + proxy, "HTTP_PROXY=" + proxy, "AWS_REGION=us-east-1"}
	for _, args := range [][]string{
		{"dlq", "list", "--queue", "https://sqs.us-east-1.amazonaws.com/123456789012/prod-LedgerDeadLetterQueue.fifo"},
		{"dlq", "redrive", "--queue", "prod-LedgerDeadLetterQueue.fifo", "--dry-run"},
		{"record", "get", "--table", "prod-IdempotencyTable", "--consumer", "ledger", "credit-42"},
		{"hold", "get", "--stack", "prod", "--consumer", "ledger", "acct-7"},
		{"outbox", "republish", "--table", "prod-AppTable", "--route", "account.credited=prod-LedgerQueue.fifo", "--event-id", "credit-42"},
		{"dlq", "list", "--endpoint-url", endpoint, "--queue", "LedgerDeadLetterQueue"},
	} {
		code, stdout, stderr := runBare(t, bin, env, args...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code != 1 || stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], "no AWS credentials") ||
			!strings.Contains(lines[0], "AWS_PROFILE") || !strings.Contains(lines[0], "AWS_ACCESS_KEY_ID") || !strings.Contains(lines[0], "--local") {
			t.Errorf("onceflow %s: exit %d, stdout %q, stderr %q; want exit 1 and one line saying there are no credentials and how to give them",
				strings.Join(args, " "), code, stdout, stderr)
		}
	}
	if n := imdsHits.Load() + proxyHits.Load() + endpointHits.Load(); n != 0 {
		t.Errorf("%d connections (instance metadata %d, AWS through the proxy %d, the explicit endpoint %d); want none without credentials",
			n, imdsHits.Load(), proxyHits.Load(), endpointHits.Load())
	}

	// Opted in, the chain asks the instance metadata service (dead here: still no credentials).
	code, _, stderr := runBare(t, bin, env, "dlq", "list", "--imds", "--queue", "LedgerDeadLetterQueue")
	if code != 1 || !strings.Contains(stderr, "no AWS credentials") || imdsHits.Load() == 0 {
		t.Errorf("with --imds: exit %d, stderr %q, %d connections to the instance metadata service; want it asked", code, stderr, imdsHits.Load())
	}
}

// With credentials, an explicit endpoint takes every call: --endpoint-url, or the SDK's own
// AWS_ENDPOINT_URL_<SERVICE> (a dead listener here, so each call fails after reaching it).
func TestOnceflow_sends_its_calls_to_an_explicit_endpoint(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "onceflow")
	goCmd(t, "build", "-o", bin, ".")
	creds := []string{"AWS_ACCESS_KEY_ID=operator", "AWS_SECRET_ACCESS_KEY=operator-secret", "AWS_REGION=us-east-1", "AWS_MAX_ATTEMPTS=1"}
	dlqList := []string{"dlq", "list", "--queue", "https://sqs.us-east-1.amazonaws.com/123456789012/q.fifo"}
	for _, tt := range []struct {
		name string
		run  func(url string) (env, args []string)
	}{
		{"--endpoint-url", func(url string) ([]string, []string) { return nil, append(dlqList, "--endpoint-url", url) }},
		{"AWS_ENDPOINT_URL_SQS", func(url string) ([]string, []string) { return []string{"AWS_ENDPOINT_URL_SQS=" + url}, dlqList }},
		{"AWS_ENDPOINT_URL_DYNAMODB", func(url string) ([]string, []string) {
			return []string{"AWS_ENDPOINT_URL_DYNAMODB=" + url}, []string{"record", "get", "--table", "t", "--consumer", "ledger", "e-1"}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, hits := listener(t)
			env, args := tt.run(url)
			code, _, stderr := runBare(t, bin, append(creds, env...), args...)
			if code != 1 || hits.Load() == 0 || strings.Contains(stderr, "no AWS credentials") {
				t.Errorf("exit %d, %d connections to %s, stderr %q; want the call sent there", code, hits.Load(), url, stderr)
			}
		})
	}
}

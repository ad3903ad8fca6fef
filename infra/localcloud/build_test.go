package localcloud

import (
	"path/filepath"
	"testing"
)

func TestKebab_names_function_directories(t *testing.T) {
	for id, want := range map[string]string{"Api": "api", "OutboxRelay": "outbox-relay", "SQSConsumer": "sqs-consumer",
		"NoteTagger": "note-tagger", "HTTPEcho": "http-echo"} {
		if got := kebab(id); got != want {
			t.Errorf("kebab(%s) = %s, want %s", id, got, want)
		}
	}
}

func TestPackageArg_reads_the_package_from_a_make_dry_run(t *testing.T) {
	dry := "echo building\nGOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags \"-s -w\" -o /x/bootstrap ./functions/api\n"
	if got, want := packageArg("/repo", dry), filepath.Join("/repo", "functions", "api"); got != want {
		t.Errorf("packageArg = %q, want %q", got, want)
	}
	if got := packageArg("/repo", "cp a b\n"); got != "" {
		t.Errorf("packageArg without go build = %q, want empty", got)
	}
}

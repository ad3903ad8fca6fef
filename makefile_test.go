package onceflow_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/onceflow/onceflow/internal/localaws"
)

// SAM runs `make build-<LogicalId>` with ARTIFACTS_DIR set; without it the target would write
// /bootstrap at the filesystem root, so it refuses to run.
func TestMakefile_build_target_without_ARTIFACTS_DIR_refuses_to_run(t *testing.T) {
	cmd := exec.Command("make", "build-LedgerFunction")
	cmd.Env = append(os.Environ(), "ARTIFACTS_DIR=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "ARTIFACTS_DIR is not set") || strings.Contains(string(out), "go build") {
		t.Fatalf("make build-LedgerFunction without ARTIFACTS_DIR: %v\n%s", err, out)
	}
	dry, err := exec.Command("make", "-n", "build-LedgerFunction", "ARTIFACTS_DIR=/tmp/artifacts").CombinedOutput()
	if err != nil || !strings.Contains(string(dry), "-o /tmp/artifacts/bootstrap ./functions/ledger") {
		t.Fatalf("make -n build-LedgerFunction ARTIFACTS_DIR=/tmp/artifacts: %v\n%s", err, dry)
	}
}

// The README shows make test's command line as make runs it: the line in its sample output is
// the Makefile's recipe, with the README's -p.
func TestMakefile_README_shows_make_tests_command_line(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^infra/emulators\.sh .*-p (\d+) .*$`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("README.md shows no make test command line (infra/emulators.sh ... -p N ...)")
	}
	dry, err := exec.Command("make", "-n", "test", "TEST_P="+m[1]).CombinedOutput()
	if err != nil {
		t.Fatalf("make -n test: %v\n%s", err, dry)
	}
	if !slices.Contains(strings.Split(string(dry), "\n"), m[0]) {
		t.Errorf("README.md's make test command line\n\t%s\nis not make's:\n%s", m[0], dry)
	}
}

// Without the SAM CLI on PATH, make sam-build and make deploy say what is missing and how to
// install it, and run nothing: never the shell's "sam: command not found". A SAM CLI older
// than the template needs is refused the same way, naming both versions.
func TestMakefile_sam_targets_without_the_SAM_CLI_say_how_to_install_it(t *testing.T) {
	bin := pathOf(t, "bash", "sed", "sort", "head", "uname")
	for _, target := range []string{"sam-build", "deploy"} {
		out, err := makeOn(t, bin, target)
		if err == nil || strings.Contains(out, "command not found") || strings.Contains(out, "build --config-env") ||
			!strings.Contains(out, "no SAM CLI: 'sam' is not on PATH") || !strings.Contains(out, samInstallPage) ||
			!strings.Contains(out, "sudo ./sam-installation/install") || !strings.Contains(out, "sam --version") {
			t.Errorf("make %s without sam on PATH: %v; want it refused, saying where to install the SAM CLI from:\n%s", target, err, out)
		}
	}
	fakeSAM(t, bin, "1.160.0")
	if out, err := makeOn(t, bin, "sam-build"); err == nil || !strings.Contains(out, "the SAM CLI is 1.160.0") ||
		!strings.Contains(out, "needs 1.161.0 or later") || strings.Contains(out, "build --config-env") {
		t.Errorf("make sam-build with SAM CLI 1.160.0: %v; want it refused, naming both versions:\n%s", err, out)
	}
}

// make deploy runs sam build and sam deploy with samconfig.toml's environment CONFIG_ENV, and
// without prompts when CI is set (as CI systems set it): the SAM CLI here is a script that
// answers --version and prints the command lines it is given.
func TestMakefile_deploy_runs_sam_with_the_config_env_and_without_prompts_in_CI(t *testing.T) {
	bin := pathOf(t, "bash", "sed", "sort", "head", "uname")
	fakeSAM(t, bin, "1.164.0")
	for _, c := range []struct{ args, build, deploy string }{
		{"", "sam build --config-env default", "sam deploy --config-env default\n"},
		{"CONFIG_ENV=prod CI=true", "sam build --config-env prod", "sam deploy --config-env prod --no-confirm-changeset --no-fail-on-empty-changeset\n"},
		{"CI=false", "sam build --config-env default", "sam deploy --config-env default\n"},
	} {
		out, err := makeOn(t, bin, append([]string{"deploy"}, strings.Fields(c.args)...)...)
		if err != nil || !strings.Contains(out, c.build+"\n") || !strings.Contains(out, c.deploy) {
			t.Errorf("make deploy %s: %v; want %q then %q:\n%s", c.args, err, c.build, c.deploy, out)
		}
	}
}

const samInstallPage = "https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/install-sam-cli.html"

// pathOf returns a directory holding links to the named tools only, to be a PATH without sam.
func pathOf(t *testing.T, tools ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakeSAM writes dir/sam, which says it is the SAM CLI of version and echoes any other call.
func fakeSAM(t *testing.T, dir, version string) {
	t.Helper()
	script := "#!/usr/bin/env bash\nif [ \"$1\" = --version ]; then echo 'SAM CLI, version " + version + "'; else echo \"sam $*\"; fi\n"
	if err := os.WriteFile(filepath.Join(dir, "sam"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// makeOn runs make with args on PATH dir only, returning its output.
func makeOn(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mk, args...)
	cmd.Env = append(os.Environ(), "PATH="+dir, "CI=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// make webhook-secrets stores the webhook's URL, read from standard input, and a signing secret
// it makes as SSM SecureStrings in samconfig.toml's region: the real AWS CLI against the local
// parameter store. No value is on a command line (every --value is standard input) or in the
// output; a second run replaces the URL and keeps the secret; a URL that is not https is refused.
func TestMakefile_webhook_secrets_stores_both_from_stdin_and_keeps_the_secret(t *testing.T) {
	if _, err := exec.LookPath("aws"); err != nil {
		t.Fatal("the AWS CLI is not on PATH: pip install awscli (README.md, prerequisites)")
	}
	store, err := localaws.StartParameterStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	client := ssm.NewFromConfig(localaws.Config(), func(o *ssm.Options) { o.BaseEndpoint = aws.String(store.URL) })
	value := func(name string) (string, int64) {
		out, err := client.GetParameter(context.Background(), &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(true)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return aws.ToString(out.Parameter.Value), out.Parameter.Version
	}
	run := func(stdin string) (string, error) {
		cmd := exec.Command("make", "webhook-secrets")
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "AWS_") }),
			"AWS_ENDPOINT_URL_SSM="+store.URL, "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	const urlName, secretName = "/onceflow/webhook/url", "/onceflow/webhook/signing-secret"
	first := "https://hooks.example.com/notes?token=first"
	out, err := run(first + "\n")
	if err != nil {
		t.Fatalf("make webhook-secrets: %v\n%s", err, out)
	}
	url, _ := value(urlName)
	secret, _ := value(secretName)
	if err != nil || url != first || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(secret) ||
		!strings.Contains(out, urlName+" in eu-west-1: stored, version 1") || !strings.Contains(out, secretName+" in eu-west-1: a new 32-byte secret") {
		t.Fatalf("make webhook-secrets: %v; stored %q and a secret of %d characters; want the URL and 64 hex characters:\n%s", err, url, len(secret), out)
	}
	second := "https://hooks.example.com/notes?token=second"
	out2, err := run(second)
	url, urlVersion := value(urlName)
	kept, _ := value(secretName)
	if err != nil || url != second || urlVersion != 2 || kept != secret || !strings.Contains(out2, secretName+" in eu-west-1: kept") {
		t.Errorf("make webhook-secrets again: %v; URL %q version %d, secret kept %v; want the new URL at version 2 and the secret kept:\n%s",
			err, url, urlVersion, kept == secret, out2)
	}
	out3, err := run("http://hooks.example.com/notes")
	if url, v := value(urlName); err == nil || url != second || v != 2 || !strings.Contains(out3, "must start with https://") {
		t.Errorf("make webhook-secrets of an http URL: %v; stored %q version %d; want it refused, nothing stored:\n%s", err, url, v, out3)
	}
	for _, o := range []string{out, out2, out3} {
		if strings.Contains(o, "token=") || strings.Contains(o, secret) {
			t.Errorf("make webhook-secrets printed a value:\n%s", o)
		}
	}
	dry, err := exec.Command("make", "-n", "webhook-secrets").CombinedOutput()
	if n := strings.Count(string(dry), "--value "); err != nil || n != 2 || strings.Count(string(dry), "--value file:///dev/stdin") != n {
		t.Errorf("make -n webhook-secrets: %v; want its two --value arguments to be standard input:\n%s", err, dry)
	}
}

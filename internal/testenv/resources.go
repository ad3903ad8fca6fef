package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/onceflow/onceflow/internal/localaws"
)

// Root is the repository root, for reading events/ and template.yaml.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Parameters starts the local SSM parameter store (localaws) serving values (name to value) and
// returns a client of it. The store stops when the test ends.
func Parameters(tb testing.TB, values map[string]string) *ssm.Client {
	tb.Helper()
	store, err := localaws.StartParameterStore(values)
	if err != nil {
		tb.Fatalf("start the parameter store: %v", err)
	}
	tb.Cleanup(func() { _ = store.Close() })
	return ssm.NewFromConfig(localaws.Config(), func(o *ssm.Options) { o.BaseEndpoint = aws.String(store.URL) })
}

// SampleEvent decodes the sample events/<name> into v, as it is written.
func SampleEvent(tb testing.TB, name string, v any) {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), "events", name))
	if err != nil {
		tb.Fatalf("read sample event: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("decode sample event %s: %v", name, err)
	}
}

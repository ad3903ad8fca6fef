package localcloud

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/testkit/emulator"
)

// ensurePackages returns the directory of the engine's pinned emulators (pkg/testkit/emulator),
// installing them when they are missing and Install allows it.
func (c *Cloud) ensurePackages(ctx context.Context) (string, error) {
	if dir, ok := emulator.Installed(); ok || !c.cfg.Install {
		if !ok {
			return "", fmt.Errorf("the pinned emulators are not installed: make up and make test install them (emulator.Install)")
		}
		return dir, nil
	}
	c.log.Info("installing the pinned emulators", "cmd", "npm ci")
	return emulator.Install(ctx)
}

// startEmulator starts kind from the packages in dir on a free loopback port, tracked and
// logging under its ID, and returns its URL once it answers (probe, or kind.Ready without one).
func (c *Cloud) startEmulator(ctx context.Context, kind *emulator.Kind, dir string, probe func(context.Context, string) error) (string, error) {
	if err := kind.Runnable(); err != nil {
		return "", err
	}
	port, err := emulator.FreePort()
	if err != nil {
		return "", err
	}
	cmd := kind.Command(dir, port)
	if kind == emulator.DynamoDB { // it writes a file into its working directory
		cmd.Dir = filepath.Join(c.cfg.StateDir, "dynamodb")
		if err := os.MkdirAll(cmd.Dir, 0o755); err != nil {
			return "", err
		}
	}
	p, err := c.startTracked(kind.ID, cmd)
	if err != nil {
		return "", err
	}
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	if probe == nil {
		probe = kind.Ready
	}
	err = waitReady(ctx, p, readyBound, func(ctx context.Context) error { return probe(ctx, endpoint) })
	return endpoint, err
}

// dynamoDBReady is DynamoDB Local serving the API: a ListTables answered.
func dynamoDBReady(ctx context.Context, endpoint string) error {
	_, err := Endpoints{DynamoDB: endpoint}.DynamoDBClient().ListTables(ctx, &dynamodb.ListTablesInput{})
	return err
}

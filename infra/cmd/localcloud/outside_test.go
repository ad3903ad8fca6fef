package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/reap"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// The local cloud built on its own runs the template of a project outside this repository, from
// the project's directory and with nothing but its defaults: the shop's spend consumer (a
// module of its own that requires the engine by an absolute replace, built by its Makefile's
// build-SpendFunction as SAM builds it), an order sent to its FIFO queue applied to the shop's
// table once though sent twice, every call authorised by the gatekeeper from the template's
// role, and no process of the run left after down.
func TestUp_runs_an_outside_projects_template_from_its_directory(t *testing.T) {
	testkit.SkipShort(t) // it starts emulators and a local cloud of its own
	bin := buildCLI(t)
	project := outsideProject(t)
	run := reap.NewRun()
	state := filepath.Join(project, ".local")
	t.Cleanup(func() { reap.Sweep(run, time.Second) }) // only if the test failed before down
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = project, reap.Mark(os.Environ(), run)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("localcloud %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = localcloud.Down(state) })
	cli("up", "-prefix", fmt.Sprintf("out%d", time.Now().UnixNano()))
	ep, err := localcloud.ReadEndpoints(state)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Gatekeeper == "" || ep.Principals["SpendFunction"].AccessKeyID == "" {
		t.Fatalf("the gatekeeper is off or does not know SpendFunction: %+v", ep)
	}
	if _, err := os.Stat(filepath.Join(state, "build", "SpendFunction", "bootstrap")); err != nil {
		t.Fatalf("the function was not built into the project's state: %v", err)
	}
	order := `{"specversion":"1.0","id":"order.placed-o1","source":"shop/api","type":"order.placed","subject":"c1",` +
		`"time":"2026-12-06T00:00:00Z","datacontenttype":"application/json","data":{"orderId":"o1","customerId":"c1","total":12}}`
	for range 2 { // the same event twice, as a producer's retry sends it: applied once
		if out := cli("send", "-group", "c1", "OrdersQueue", order); !strings.Contains(out, "to OrdersQueue in group c1") {
			t.Fatalf("send: %s", out)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	waitDrained(ctx, t, ep, "OrdersQueue")
	if total := spend(ctx, t, ep, "c1"); total != 12 {
		t.Errorf("customer c1's spend is %d after the order was sent twice; want 12, applied once", total)
	}
	st, err := ep.ReadStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Access == nil || st.Access.Denied != 0 || st.Access.ByPrincipal["SpendFunction"].Authorized == 0 {
		t.Errorf("gatekeeper: want calls authorised and none denied, got %+v", st.Access)
	}
	before := reap.Find(run)
	if len(before) < 4 { // DynamoDB Local, fauxqs, localcloud serve, the RIE and its bootstrap
		t.Fatalf("the run's processes before down are %v: the check after it would prove nothing", before)
	}
	cli("down")
	deadline := time.Now().Add(10 * time.Second)
	for left := reap.Find(run); len(left) > 0; left = reap.Find(run) {
		if time.Now().After(deadline) {
			t.Fatalf("processes of the run left after down: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A template with what the local cloud does not run is refused by up before anything starts,
// from the project's directory, naming the resource and the property.
func TestUp_refuses_an_unsupported_property_before_anything_starts(t *testing.T) {
	bin := buildCLI(t)
	project := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("testdata", "outside", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "      VisibilityTimeout: 60\n", "      VisibilityTimeout: 60\n      KmsMasterKeyId: alias/aws/sqs\n", 1)
	if err := os.WriteFile(filepath.Join(project, "template.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "up")
	cmd.Dir = project
	out, err := cmd.CombinedOutput()
	want := "template.yaml: resource OrdersQueue (AWS::SQS::Queue): property KmsMasterKeyId is not supported by the local cloud"
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("up: %v\n%s\nwant it refused with %q", err, out, want)
	}
	if _, err := os.Stat(filepath.Join(project, ".local", "state.json")); !os.IsNotExist(err) {
		t.Errorf("up recorded a cloud for a refused template: %v", err)
	}
}

// outsideProject writes the shop (pkg/testdata/shop: its handler and its spend command) into a
// new directory as a project of its own: its go.mod requires the engine by an absolute replace
// to this checkout's pkg, and testdata/outside gives it a template and a Makefile.
func outsideProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	shop, err := filepath.Abs(filepath.Join("..", "..", "..", "pkg", "testdata", "shop"))
	if err != nil {
		t.Fatal(err)
	}
	engine := filepath.Dir(filepath.Dir(shop))
	copyFile := func(from, to string, edit func(string) string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, []byte(edit(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	same := func(s string) string { return s }
	copyFile(filepath.Join(shop, "go.mod"), filepath.Join(dir, "go.mod"), func(s string) string {
		const rel = "=> ../.."
		if !strings.Contains(s, rel) {
			t.Fatalf("the shop's go.mod no longer replaces the engine %s", rel)
		}
		return strings.Replace(s, rel, "=> "+engine, 1)
	})
	for _, f := range []string{"go.sum", "doc.go", "shop.go", filepath.Join("cmd", "spend", "main.go")} {
		copyFile(filepath.Join(shop, f), filepath.Join(dir, f), same)
	}
	for _, f := range []string{"template.yaml", "Makefile"} {
		copyFile(filepath.Join("testdata", "outside", f), filepath.Join(dir, f), same)
	}
	return dir
}

// waitDrained waits until queue id of the cloud holds no message, visible or in flight.
func waitDrained(ctx context.Context, t *testing.T, ep localcloud.Endpoints, id string) {
	t.Helper()
	client := ep.SQSClient()
	for {
		out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(ep.Queues[id].URL),
			AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
		if err == nil && out.Attributes["ApproximateNumberOfMessages"] == "0" && out.Attributes["ApproximateNumberOfMessagesNotVisible"] == "0" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s not drained: %v %v", id, out, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// spend reads a customer's spend from the shop's table on DynamoDB Local.
func spend(ctx context.Context, t *testing.T, ep localcloud.Endpoints, customer string) int64 {
	t.Helper()
	out, err := ep.DynamoDBClient().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(ep.Tables["ShopTable"].Name),
		Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "CUSTOMER#" + customer},
			"sk": &ddbtypes.AttributeValueMemberS{Value: "SPEND"}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var item struct{ Total int64 }
	if err := attributevalue.UnmarshalMap(out.Item, &item); err != nil {
		t.Fatal(err)
	}
	return item.Total
}

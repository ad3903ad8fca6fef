package localcloud_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// supportBase is a template of one consumer the local cloud runs; each case of
// TestLoadTemplate_refuses_what_it_does_not_run_naming_resource_and_property changes one line.
const supportBase = `AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: provided.al2023
    Timeout: 10
Resources:
  OrdersQueue:
    Type: AWS::SQS::Queue
    Properties:
      FifoQueue: true
      VisibilityTimeout: 60
  OrdersTable:
    Type: AWS::DynamoDB::Table
    Properties:
      KeySchema: [{ AttributeName: pk, KeyType: HASH }]
      AttributeDefinitions: [{ AttributeName: pk, AttributeType: S }]
  OrdersFunction:
    Type: AWS::Serverless::Function
    Metadata:
      BuildMethod: makefile
    Properties:
      CodeUri: .
      Events:
        Orders:
          Type: SQS
          Properties:
            Queue: !GetAtt OrdersQueue.Arn
            BatchSize: 10
  OrdersAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AnythingAtAll: true
`

func TestLoadTemplate_refuses_what_it_does_not_run_naming_resource_and_property(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		want           string // the line of the error, after "<path>: "
	}{
		{"a property of a resource", "      FifoQueue: true\n", "      FifoQueue: true\n      KmsMasterKeyId: alias/aws/sqs\n",
			"resource OrdersQueue (AWS::SQS::Queue): property KmsMasterKeyId is not supported by the local cloud"},
		{"a resource type", "  OrdersTable:\n    Type: AWS::DynamoDB::Table\n", "  OrdersTable:\n    Type: AWS::Serverless::SimpleTable\n",
			"resource OrdersTable: type AWS::Serverless::SimpleTable is not supported by the local cloud"},
		{"an event type", "          Type: SQS\n", "          Type: Schedule\n",
			"resource OrdersFunction (AWS::Serverless::Function): event Orders: type Schedule is not supported by the local cloud"},
		{"a property of an event", "            BatchSize: 10\n", "            BatchSize: 10\n            TumblingWindowInSeconds: 60\n",
			"resource OrdersFunction (AWS::Serverless::Function): event Orders (SQS): property TumblingWindowInSeconds is not supported by the local cloud"},
		{"a property of Globals.Function", "    Timeout: 10\n", "    Timeout: 10\n    Layers: [arn:aws:lambda:us-east-1:1:layer:x:1]\n",
			"Globals.Function: property Layers is not supported by the local cloud"},
		{"a section of Globals", "Resources:\n", "  Api:\n    Cors: '*'\nResources:\n",
			"Globals.Api is not supported by the local cloud"},
		{"an attribute of a resource", "  OrdersQueue:\n    Type: AWS::SQS::Queue\n", "  OrdersQueue:\n    Type: AWS::SQS::Queue\n    Condition: Never\n",
			"resource OrdersQueue (AWS::SQS::Queue): attribute Condition is not supported by the local cloud"},
		{"a build method", "      BuildMethod: makefile\n", "      BuildMethod: esbuild\n",
			"resource OrdersFunction (AWS::Serverless::Function): Metadata.BuildMethod esbuild is not supported by the local cloud"},
		{"a section", "Resources:\n", "Hooks:\n  Check: {}\nResources:\n",
			"section Hooks is not supported by the local cloud"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(supportBase, tc.old) {
				t.Fatalf("the base template has no %q", tc.old)
			}
			path := writeTemplate(t, strings.Replace(supportBase, tc.old, tc.new, 1))
			_, err := localcloud.LoadTemplate(path)
			if err == nil {
				t.Fatal("LoadTemplate accepted the template")
			}
			lines := strings.Split(err.Error(), "\n")
			if lines[0] != path+": "+tc.want {
				t.Errorf("error:\n%s\nwant its first line:\n%s: %s", err, path, tc.want)
			}
			if len(lines) != 2 || !strings.Contains(lines[1], "localcloud support") {
				t.Errorf("error:\n%s\nwant one refusal and where to read what is supported", err)
			}
		})
	}
}

// The base template itself starts: its alarm takes any property (alarms are accepted as a
// whole, not created), and so do the proving ground's templates, whose alarms, log groups,
// dashboards, topics and encryption settings the local cloud accepts without emulating them.
func TestLoadTemplate_accepts_the_templates_it_runs(t *testing.T) {
	for _, path := range []string{writeTemplate(t, supportBase), "../../template.yaml", "testdata/template.yaml",
		"testdata/one/template.yaml", "testdata/backstop/template.yaml"} {
		if _, err := localcloud.LoadTemplate(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

func writeTemplate(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

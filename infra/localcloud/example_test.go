package localcloud_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// A workload starts the local cloud of template.yaml, talks to the API (with a token) and the
// queues through the endpoints, and stops it.
func ExampleStart() {
	ctx := context.Background()
	cloud, err := localcloud.Start(ctx, localcloud.Config{
		Install:      true,                          // npm ci and go install what is missing
		Environments: map[string]int{"Consumer": 4}, // execution environments per function
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cloud.Close()

	ep := cloud.Endpoints()
	// Every route behind the template's JWT authorizer needs a token of the local issuer: this
	// client fetches one (sub alice, scope notes.write) and sends it with each request.
	api := ep.APIClient("alice", "notes.write")
	resp, err := api.Post(ep.APIURL+"/notes", "application/json", strings.NewReader(`{"title":"Hi #go","content":"x"}`))
	if err == nil {
		resp.Body.Close()
	}
	attrs, err := ep.SQSClient().GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(ep.Queues["NotesQueue"].URL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err == nil {
		fmt.Println(attrs.Attributes["ApproximateNumberOfMessages"])
	}
	_ = cloud.Kill("Consumer", 1) // crash one environment; the pool restarts it
	fmt.Println(cloud.Stats().Mappings["Consumer/Notes"].Succeeded)
}

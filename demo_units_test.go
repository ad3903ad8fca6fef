package onceflow_test

import "github.com/onceflow/onceflow/infra/consumerunit"

// demoUnits are the example application's SQS consumers as consumer units: template.yaml's
// sections of these consumers are their rendering (TestTemplate_demo_consumers_are_their_units).
var demoUnits = []consumerunit.Unit{
	{Name: "note-tagger", ID: "NoteTagger", QueueID: "Notes", Description: "Tags each created note exactly once.",
		Types: []string{"note.created"}, Writes: []string{"NOTE#*", "TAG#*"}, ClaimChecks: true},
	{Name: "ledger", ID: "Ledger", QueueID: "Ledger", Description: "Applies credits and debits to account balances exactly once.",
		Types: []string{"account.credited", "account.debited"}, Writes: []string{"ACCOUNT#*", "MOVEMENT#*"}, HoldGroup: true, ClaimChecks: true},
	{Name: "note-notifier", ID: "NoteNotifier", QueueID: "Notifications",
		Description: "POSTs each created note, signed, to the webhook under a fenced lease, with an Idempotency-Key.",
		Types:       []string{"note.created"}, Lease: true, ClaimChecks: true,
		DeadLetterCauses: "malformed, refused by the webhook with a 4xx, or failed maxReceiveCount times",
		Environment:      []string{"WEBHOOK_URL_PARAMETER: !Ref WebhookUrlParameterName", "WEBHOOK_SECRET_PARAMETER: !Ref WebhookSecretParameterName"},
		Statements: []string{`            # Read once at init, decrypted with the AWS managed key aws/ssm, whose key policy
            # lets the account's principals decrypt through SSM (a customer managed key would
            # also need kms:Decrypt on it).
            - Effect: Allow
              Action: [ssm:GetParameter]
              Resource:
                - !Sub "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter${WebhookUrlParameterName}"
                - !Sub "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter${WebhookSecretParameterName}"`}},
}

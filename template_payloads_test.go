package onceflow_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The claim-check bucket: private, encrypted, and its objects expire after the record
// retention (RetentionDays), which outlives every way a message comes back: an object is kept
// as long as a pointer to it can be delivered, and no longer.
func TestTemplate_payload_bucket_expires_objects_after_the_record_retention(t *testing.T) {
	tpl := loadTemplate(t)
	b := get(tpl, "Resources", "PayloadBucket")
	if get(b, "Type") != "AWS::S3::Bucket" {
		t.Fatalf("PayloadBucket is %v; want an AWS::S3::Bucket", get(b, "Type"))
	}
	var expiring []any
	for _, r := range asList(get(b, "Properties", "LifecycleConfiguration", "Rules")) {
		if get(r, "Status") == "Enabled" && get(r, "Prefix") == nil && get(r, "Filter") == nil {
			expiring = append(expiring, get(r, "ExpirationInDays"))
		}
	}
	if len(expiring) != 1 || refTarget(expiring[0]) != "RetentionDays" {
		t.Errorf("lifecycle expirations %v; want one enabled rule over every object: ExpirationInDays !Ref RetentionDays", expiring)
	}
	// A letter's object outlives its letter: written when it is dead-lettered, it must last
	// its dead-letter queue's retention and a redrive's stay on the source queue.
	longest := map[bool]int{}
	for _, q := range resourcesOfType(tpl, "AWS::SQS::Queue") {
		dlq := get(q, "Properties", "RedrivePolicy") == nil
		longest[dlq] = max(longest[dlq], num(get(q, "Properties", "MessageRetentionPeriod")))
	}
	if days := num(get(tpl, "Parameters", "RetentionDays", "MinValue")); days*86400 < longest[true]+longest[false] {
		t.Errorf("RetentionDays may be %d days; want at least a letter's stay and a redrive's, %d s", days, longest[true]+longest[false])
	}
	pab := get(b, "Properties", "PublicAccessBlockConfiguration")
	for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
		if fmt.Sprint(get(pab, k)) != "true" {
			t.Errorf("PublicAccessBlockConfiguration.%s = %v; want true", k, get(pab, k))
		}
	}
	if get(b, "Properties", "BucketEncryption") == nil {
		t.Error("PayloadBucket has no BucketEncryption")
	}
}

// s3Grants lists the S3 actions a function's policies allow, as "action on resource".
func s3Grants(tpl doc, fn string) []string {
	var out []string
	for _, pol := range asList(get(tpl, "Resources", fn, "Properties", "Policies")) {
		for _, st := range asList(get(pol, "Statement")) {
			for _, a := range asList(get(st, "Action")) {
				if !strings.HasPrefix(fmt.Sprint(a), "s3:") {
					continue
				}
				for _, r := range asList(get(st, "Resource")) {
					res := refTarget(r) + ".Arn"
					if sub, ok := get(r, "Fn::Sub").(string); ok {
						res = sub
					}
					out = append(out, fmt.Sprint(a)+" on "+res)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// Every SQS consumer may read payloads in the bucket it is told of, and write only there, under
// its own prefix: a dead letter of its past SQS's 1 MiB (internal/app's dead-letters/<its
// CONSUMER_NAME>/); the relay publishes outbox items, which DynamoDB bounds to 400 KB, under
// SQS's 1 MiB: it never writes a claim check and has no S3 access.
func TestTemplate_consumers_read_payloads_from_the_bucket_and_nothing_else_touches_it(t *testing.T) {
	tpl := loadTemplate(t)
	read := []string{"s3:GetObject on ${PayloadBucket.Arn}/*", "s3:ListBucket on PayloadBucket.Arn"}
	letters := func(fn any) string {
		return "s3:PutObject on ${PayloadBucket.Arn}/dead-letters/" + fmt.Sprint(get(fn, "Properties", "Environment", "Variables", "CONSUMER_NAME")) + "/*"
	}
	for id, fn := range resourcesOfType(tpl, "AWS::Serverless::Function") {
		consumer := false
		for _, ev := range asList(mapValues(get(fn, "Properties", "Events"))) {
			consumer = consumer || get(ev, "Type") == "SQS"
		}
		got := s3Grants(tpl, id)
		if !consumer {
			if len(got) != 0 {
				t.Errorf("%s (no SQS consumer) is granted %v; want no S3 access", id, got)
			}
			continue
		}
		want := slices.Sorted(slices.Values(append([]string{letters(fn)}, read...)))
		if !slices.Equal(got, want) {
			t.Errorf("%s is granted %v; want exactly %v", id, got, want)
		}
		if refTarget(get(fn, "Properties", "Environment", "Variables", "PAYLOAD_BUCKET")) != "PayloadBucket" {
			t.Errorf("%s: PAYLOAD_BUCKET is %v; want !Ref PayloadBucket", id, get(fn, "Properties", "Environment", "Variables", "PAYLOAD_BUCKET"))
		}
	}
}

// Every FIFO queue takes SQS's most, 1 MiB (publish.MaxMessageBytes), said explicitly: 256 KiB
// was the limit for years, and a queue set to it keeps it.
func TestTemplate_fifo_queues_take_1_MiB(t *testing.T) {
	tpl := loadTemplate(t)
	for id, q := range resourcesOfType(tpl, "AWS::SQS::Queue") {
		if fmt.Sprint(get(q, "Properties", "FifoQueue")) != "true" {
			continue
		}
		if n := num(get(q, "Properties", "MaximumMessageSize")); n != 1<<20 {
			t.Errorf("%s: MaximumMessageSize %d; want 1048576", id, n)
		}
	}
}

func mapValues(v any) []any {
	m, _ := v.(doc)
	var out []any
	for _, x := range m {
		out = append(out, x)
	}
	return out
}

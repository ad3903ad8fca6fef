package gatekeeper

import (
	"net/http"
	"strings"
)

// credential is what a SigV4-signed request says of its signer: the access key id and the
// scope's region and service.
type credential struct {
	accessKey, region, service string
}

// readCredential reads the credential of a request signed in its Authorization header
// ("AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, ...") or
// presigned in its query (X-Amz-Credential); ok is false for an unsigned request.
func readCredential(r *http.Request) (credential, bool) {
	scope := ""
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "AWS4-") {
		for _, part := range strings.Split(strings.TrimSpace(h[strings.IndexByte(h+" ", ' '):]), ",") {
			if k, v, ok := strings.Cut(strings.TrimSpace(part), "="); ok && k == "Credential" {
				scope = v
			}
		}
	} else if q := r.URL.Query().Get("X-Amz-Credential"); q != "" {
		scope = q
	}
	f := strings.Split(scope, "/")
	if len(f) != 5 || f[0] == "" || f[4] != "aws4_request" {
		return credential{}, false
	}
	return credential{accessKey: f[0], region: f[2], service: f[3]}, true
}

// guessService names the service of an unsigned request from its shape, so that its refusal is
// answered in that service's protocol.
func guessService(r *http.Request) string {
	t := r.Header.Get("X-Amz-Target")
	switch {
	case strings.HasPrefix(t, "DynamoDB"):
		return dynamodbService
	case strings.HasPrefix(t, "AmazonSQS"), strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded"):
		return sqsService
	case strings.HasPrefix(t, "Kinesis"):
		return kinesisService
	case strings.HasPrefix(t, "AmazonSSM"):
		return ssmService
	}
	return s3Service
}

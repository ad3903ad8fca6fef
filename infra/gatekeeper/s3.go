package gatekeeper

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/onceflow/onceflow/infra/iam"
)

// s3Sub are the subresources of a bucket or object request (its query's keys) that name
// another action than the method's own, by method and whether an object is addressed.
var s3Sub = map[string]map[string]string{
	"GET bucket": {"location": "GetBucketLocation", "versions": "ListBucketVersions", "uploads": "ListBucketMultipartUploads",
		"lifecycle": "GetLifecycleConfiguration", "policy": "GetBucketPolicy", "acl": "GetBucketAcl", "tagging": "GetBucketTagging",
		"versioning": "GetBucketVersioning", "encryption": "GetEncryptionConfiguration", "cors": "GetBucketCORS",
		"notification": "GetBucketNotification", "ownershipControls": "GetBucketOwnershipControls"},
	"PUT bucket": {"lifecycle": "PutLifecycleConfiguration", "policy": "PutBucketPolicy", "acl": "PutBucketAcl", "tagging": "PutBucketTagging",
		"versioning": "PutBucketVersioning", "encryption": "PutEncryptionConfiguration", "cors": "PutBucketCORS",
		"notification": "PutBucketNotification", "ownershipControls": "PutBucketOwnershipControls"},
	"DELETE bucket": {"lifecycle": "PutLifecycleConfiguration", "policy": "DeleteBucketPolicy", "tagging": "PutBucketTagging",
		"cors": "PutBucketCORS", "encryption": "PutEncryptionConfiguration"},
	"GET object":    {"tagging": "GetObjectTagging", "acl": "GetObjectAcl", "uploadId": "ListMultipartUploadParts", "attributes": "GetObjectAttributes"},
	"PUT object":    {"tagging": "PutObjectTagging", "acl": "PutObjectAcl"},
	"DELETE object": {"tagging": "DeleteObjectTagging", "uploadId": "AbortMultipartUpload"},
	"POST object":   {"restore": "RestoreObject", "select": "GetObject"},
}

// s3Own are the actions of each method on a bucket and on an object, with no subresource.
var s3Own = map[string]string{
	"GET bucket": "ListBucket", "HEAD bucket": "ListBucket", "PUT bucket": "CreateBucket", "DELETE bucket": "DeleteBucket",
	"GET object": "GetObject", "HEAD object": "GetObject", "PUT object": "PutObject", "DELETE object": "DeleteObject",
	"POST object": "PutObject", // multipart upload: create, complete
}

// s3Requests names the authorisations of an S3 call from its method, path (path-style:
// /bucket/key) and query: GetObject for GET and HEAD of an object (GetObjectVersion with a
// versionId), PutObject for PUT (and the source's GetObject for a copy), ListBucket for GET
// and HEAD of a bucket (with s3:prefix, s3:delimiter, s3:max-keys), DeleteObject per key of a
// multi-object delete, the subresources' own actions.
func (g *Gatekeeper) s3Requests(r *http.Request, body []byte) ([]iam.Request, error) {
	bucket, key := s3Address(r)
	q := r.URL.Query()
	if bucket == "" {
		if r.Method == http.MethodGet {
			return []iam.Request{{Action: "s3:ListAllMyBuckets", Resource: "*"}}, nil
		}
		return nil, fmt.Errorf("s3 %s /: no bucket", r.Method)
	}
	bucketARN := "arn:aws:s3:::" + bucket
	if key == "" && r.Method == http.MethodPost && q.Has("delete") {
		return s3DeleteObjects(bucketARN, body)
	}
	kind, resource := "bucket", bucketARN
	if key != "" {
		kind, resource = "object", bucketARN+"/"+key
	}
	sig := r.Method + " " + kind
	action, ok := s3Own[sig]
	if !ok {
		return nil, fmt.Errorf("s3 %s %s: not an S3 call the gatekeeper knows", r.Method, r.URL.Path)
	}
	for _, sub := range sortedKeys(s3Sub[sig]) {
		if q.Has(sub) {
			action = s3Sub[sig][sub]
		}
	}
	if q.Has("versionId") {
		switch action {
		case "GetObject", "DeleteObject", "GetObjectTagging", "PutObjectTagging", "DeleteObjectTagging", "GetObjectAcl":
			action = strings.Replace(action, "Object", "ObjectVersion", 1)
		}
	}
	out := []iam.Request{{Action: "s3:" + action, Resource: resource}}
	if actions["s3:"+action].Has("s3:prefix") { // ListBucket, ListBucketVersions
		ctx := map[string][]string{}
		for _, k := range []string{"prefix", "delimiter", "max-keys"} {
			if q.Has(k) {
				ctx["s3:"+k] = []string{q.Get(k)}
			}
		}
		out[0].Context = ctx
	}
	if src := r.Header.Get("X-Amz-Copy-Source"); src != "" && r.Method == http.MethodPut {
		src, _ = url.PathUnescape(strings.TrimPrefix(src, "/"))
		src, _, _ = strings.Cut(src, "?")
		out = append(out, iam.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::" + src})
	}
	return out, nil
}

// s3Address returns the bucket and key a request addresses: path-style (/bucket/key, as the
// SDK addresses an endpoint that is an IP address), or virtual-hosted under localhost.
func s3Address(r *http.Request) (bucket, key string) {
	p := strings.TrimPrefix(r.URL.Path, "/")
	host, _, _ := strings.Cut(r.Host, ":")
	if b, ok := strings.CutSuffix(host, ".localhost"); ok {
		return b, p
	}
	bucket, key, _ = strings.Cut(p, "/")
	return bucket, key
}

// s3DeleteObjects authorises a multi-object delete: DeleteObject on each key of its body.
func s3DeleteObjects(bucketARN string, body []byte) ([]iam.Request, error) {
	var del struct {
		Objects []struct {
			Key       string `xml:"Key"`
			VersionID string `xml:"VersionId"`
		} `xml:"Object"`
	}
	if err := xml.Unmarshal(body, &del); err != nil {
		return nil, fmt.Errorf("s3 DeleteObjects: %w", err)
	}
	out := make([]iam.Request, 0, len(del.Objects))
	for _, o := range del.Objects {
		action := "s3:DeleteObject"
		if o.VersionID != "" {
			action = "s3:DeleteObjectVersion"
		}
		out = append(out, iam.Request{Action: action, Resource: bucketARN + "/" + o.Key})
	}
	return out, nil
}

type listRightKey struct{}

// withListRight marks a GetObject or HeadObject request whose principal may not list the
// bucket: S3 then answers a missing object 403 AccessDenied rather than 404, so as not to say
// what the bucket holds (observe converts the emulator's 404).
func (g *Gatekeeper) withListRight(r *http.Request, p *Principal, reqs []iam.Request) *http.Request {
	if len(reqs) != 1 || reqs[0].Action != "s3:GetObject" {
		return r
	}
	bucket, _ := s3Address(r)
	list := iam.Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::" + bucket}
	list.Context = g.withGlobalKeys(nil, p, g.cfg.Region)
	if iam.Evaluate(p.Policies, list).Allowed {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), listRightKey{}, &missingObject{principal: p, list: list}))
}

type missingObject struct {
	principal *Principal
	list      iam.Request
}

// Package gatekeeper authorises AWS API calls as AWS would before they reach an emulator: it
// reads the caller's access key id and the service from the request's SigV4 credential scope,
// knows the caller's principal and policies by that key, names the IAM actions and resources
// the request needs (each item of a DynamoDB transaction by its own action, batch calls by
// theirs, S3 by method and path, a Kinesis iterator by the stream it came from) as its one
// table of actions maps them (refusing an action it does not map), evaluates them with package
// iam, and answers a refusal as the service answers it. An allowed request goes to the
// emulator unchanged. It does not verify signatures: the key id names the caller.
package gatekeeper

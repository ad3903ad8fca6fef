// Package iam is the part of AWS Identity and Access Management the local cloud needs to refuse
// what AWS would refuse: identity-based policies (statements with Action, NotAction, Resource,
// NotResource and Condition), their evaluation for one request (an explicit Deny wins, then an
// Allow, else the implicit deny), the execution roles the SAM transform creates for a
// template's functions (inline statements, policy templates, the AWS managed policies it
// attaches and the statements it adds for event source destinations), and the documents of
// those managed policies, pinned here once for the local cloud and the template's tests.
package iam

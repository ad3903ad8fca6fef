// Package api is the HTTP API (API Gateway HTTP API, payload format 2.0): it creates notes and
// records credit and debit requests by writing the entity and its outbox event in one
// TransactWriteItems, and reads notes, tag counts and accounts. Bad input is a 400 whose JSON
// body names the field; an unknown route is a 404; neither writes anything.
//
// Every route needs a token that API Gateway's JWT authorizer verified: its claims arrive in
// requestContext.authorizer.jwt, and the API's access rules decide from them alone (scopes
// per route, ownership of an account from the token's sub): 401 without claims, 403 without
// the right, each with a JSON {"error": ...} body.
//
// Besides the notes and ledger items, the API keeps one item per Idempotency-Key in the app
// table, written in the same transaction as the note it created:
//
//	request pk "REQUEST#<key>"  sk "REQUEST"  noteId, requestHash (SHA-256 of the body's
//	                                          fields), expiresAt (epoch seconds, 24 hours on)
//
// A key older than that is treated as new, whether or not TTL has removed its item yet.
package api

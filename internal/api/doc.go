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
// Besides the notes and ledger items, the API keeps one item per caller and Idempotency-Key in
// the app table, written in the same transaction as the note it created; the caller is the
// token's sub, so another caller's same key is another request:
//
//	request pk "REQUEST#<sub>#<key>"  sk "REQUEST"  noteId, requestHash (SHA-256 of the body's
//	                                                fields), expiresAt (epoch seconds, 24 hours on)
//
// A key older than that (IdempotencyWindow, exact to the second) is treated as new, whether or
// not TTL has removed its item yet: the request creates another note, with its own event.
//
// A credit or debit writes its movement item (package ledger), pending and without expiry,
// with its outbox event, and answers 202 with the Location of its status,
// GET /accounts/{id}/movements/{reference}: pending (or held, with what it is held behind,
// while the ledger holds the account behind a dead-lettered movement), then applied or
// rejected as the ledger consumer decides. A reference is a business key for as long as the table keeps the item:
// the same movement again is 202 with the same event id and no new event; another is 422.
package api

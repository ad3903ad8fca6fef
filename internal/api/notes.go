package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/internal/notes"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/xray"
)

// IdempotencyKeyHeader makes POST /notes idempotent for its caller: the key is scoped by the
// token's sub, so two callers using one key get a note each.
const IdempotencyKeyHeader = "Idempotency-Key"

// IdempotencyWindow is how long an Idempotency-Key is remembered.
const IdempotencyWindow = 24 * time.Hour

// maxKeyLength bounds an Idempotency-Key.
const maxKeyLength = 255

type noteRequest struct {
	Title   *string `json:"title"`
	Content *string `json:"content"`
}

// noteResponse is the JSON of a note.
type noteResponse struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Content string   `json:"content"`
	Tags    []string `json:"tags"`
	Tagging string   `json:"tagging"` // "pending" until the note-tagger has run, then "done"
}

func toResponse(n notes.Note) noteResponse {
	tags := n.Tags
	if tags == nil {
		tags = []string{}
	}
	tagging := "pending"
	if n.TaggedAt != "" {
		tagging = "done"
	}
	return noteResponse{ID: n.ID, Title: n.Title, Content: n.Content, Tags: tags, Tagging: tagging}
}

// requestItem remembers which note an Idempotency-Key created, and from what.
type requestItem struct {
	PK          string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	Kind        string `dynamodbav:"kind"`
	NoteID      string `dynamodbav:"noteId"`
	RequestHash string `dynamodbav:"requestHash"`
	ExpiresAt   int64  `dynamodbav:"expiresAt"`
}

func (r noteRequest) validate() *fieldError {
	switch {
	case r.Title == nil || *r.Title == "":
		return badField("title", "required")
	case len([]rune(*r.Title)) > notes.MaxTitle:
		return badField("title", "longer than %d characters", notes.MaxTitle)
	case r.Content == nil:
		return badField("content", "required")
	case len(*r.Content) > notes.MaxContent:
		return badField("content", "longer than %d bytes", notes.MaxContent)
	}
	return sendable(map[string]string{"title": *r.Title, "content": *r.Content})
}

func (h *Handler) createNote(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	var body noteRequest
	if fe := decodeBody(req, &body); fe != nil {
		return respondField(fe), nil
	}
	if fe := body.validate(); fe != nil {
		return respondField(fe), nil
	}
	key, hasKey := header(req, IdempotencyKeyHeader)
	if hasKey && (key == "" || len(key) > maxKeyLength) {
		return respondField(badField(IdempotencyKeyHeader, "must be 1 to %d characters", maxKeyLength)), nil
	}
	now := h.cfg.Now()
	id := h.cfg.NewID()
	writes, note, err := notes.Create(h.cfg.Table, id, *body.Title, *body.Content, now,
		outbox.WithTrace(xray.FromContext(ctx)))
	if err != nil {
		var mal *cloudevent.MalformedError
		if errors.As(err, &mal) {
			return respondField(badField(mal.Field, "%s", mal.Problem)), nil
		}
		return events.APIGatewayV2HTTPResponse{}, err
	}
	hash := requestHash(*body.Title, *body.Content)
	if hasKey {
		caller, _ := PrincipalOf(req)
		w, err := h.requestWrite(caller.Subject, key, id, hash, now)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		writes = append([]types.TransactWriteItem{w}, writes...)
	}
	_, err = h.cfg.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes})
	if err == nil {
		resp := respond(http.StatusCreated, toResponse(note))
		resp.Headers["Location"] = "/notes/" + id
		return resp, nil
	}
	if hasKey {
		if stored, ok := conditionFailedItem(err, 0); ok {
			return h.replayNote(ctx, stored, hash)
		}
	}
	return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("create note %s: %w", id, err)
}

// replayNote answers a request whose Idempotency-Key was already used.
func (h *Handler) replayNote(ctx context.Context, stored map[string]types.AttributeValue, hash string) (events.APIGatewayV2HTTPResponse, error) {
	var prev requestItem
	if err := attributevalue.UnmarshalMap(stored, &prev); err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("decode request item: %w", err)
	}
	if prev.RequestHash != hash {
		return respondField(&fieldError{status: http.StatusUnprocessableEntity, field: IdempotencyKeyHeader,
			message: "already used with a different request body"}), nil
	}
	note, found, err := h.note(ctx, prev.NoteID)
	if err != nil || !found {
		return events.APIGatewayV2HTTPResponse{}, errors.Join(fmt.Errorf("note %s of a replayed request is missing", prev.NoteID), err)
	}
	resp := respond(http.StatusOK, toResponse(note))
	resp.Headers["Location"] = "/notes/" + note.ID
	return resp, nil
}

func (h *Handler) requestWrite(caller, key, noteID, hash string, now time.Time) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(requestItem{PK: RequestPK(caller, key), SK: "REQUEST", Kind: "request",
		NoteID: noteID, RequestHash: hash, ExpiresAt: now.Add(IdempotencyWindow).Unix()})
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("marshal request item: %w", err)
	}
	fresh := expression.AttributeNotExists(expression.Name("pk")).
		Or(expression.Name("expiresAt").LessThan(expression.Value(now.Unix())))
	cond, err := expression.NewBuilder().WithCondition(fresh).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("request condition: %w", err)
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(h.cfg.Table), Item: item,
		ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names(),
		ExpressionAttributeValues:           cond.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}, nil
}

// RequestPK is the partition key of the item that remembers the Idempotency-Key key of the
// caller whose token's sub is caller: "REQUEST#<caller, query-escaped>#<key>" (the escaped
// caller holds no '#', so no two callers' keys meet).
func RequestPK(caller, key string) string { return "REQUEST#" + url.QueryEscape(caller) + "#" + key }

func requestHash(title, content string) string {
	sum := sha256.Sum256([]byte(title + "\x00" + content))
	return hex.EncodeToString(sum[:])
}

// conditionFailedItem returns the stored item of write i when err is a cancelled transaction
// whose only failure is write i's condition.
func conditionFailedItem(err error, i int) (map[string]types.AttributeValue, bool) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || i >= len(tce.CancellationReasons) {
		return nil, false
	}
	r := tce.CancellationReasons[i]
	if aws.ToString(r.Code) != "ConditionalCheckFailed" || r.Item == nil {
		return nil, false
	}
	return r.Item, true
}

func (h *Handler) note(ctx context.Context, id string) (notes.Note, bool, error) {
	out, err := h.cfg.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(h.cfg.Table),
		Key: notes.Key(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return notes.Note{}, false, fmt.Errorf("get note %s: %w", id, err)
	}
	if out.Item == nil {
		return notes.Note{}, false, nil
	}
	var n notes.Note
	if err := attributevalue.UnmarshalMap(out.Item, &n); err != nil {
		return notes.Note{}, false, fmt.Errorf("decode note %s: %w", id, err)
	}
	return n, true, nil
}

func (h *Handler) getNote(ctx context.Context, id string) (events.APIGatewayV2HTTPResponse, error) {
	if !idPattern.MatchString(id) {
		return respondField(badField("id", "must be 1 to 64 letters, digits, '-' or '_'")), nil
	}
	n, found, err := h.note(ctx, id)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if !found {
		return respondError(http.StatusNotFound, "note "+id+" not found"), nil
	}
	return respond(http.StatusOK, toResponse(n)), nil
}

func (h *Handler) getTag(ctx context.Context, raw string) (events.APIGatewayV2HTTPResponse, error) {
	raw = strings.TrimPrefix(raw, "#")
	tags := notes.Tags("#"+raw, "")
	if len(tags) != 1 || tags[0] != strings.ToLower(raw) {
		return respondField(badField("tag", "%q is not a tag: letters, digits and '_', at most %d", raw, notes.MaxTagLength)), nil
	}
	tag := tags[0]
	out, err := h.cfg.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(h.cfg.Table), Key: notes.TagKey(tag)})
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("get tag %s: %w", tag, err)
	}
	var counter struct {
		Count int64 `dynamodbav:"count"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &counter); err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("decode tag %s: %w", tag, err)
	}
	return respond(http.StatusOK, struct {
		Tag   string `json:"tag"`
		Count int64  `json:"count"`
	}{tag, counter.Count}), nil
}

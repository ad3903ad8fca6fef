package holdlist

import (
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/port"
)

// Hold is a group held under idempotency.HoldGroup, one per consumer and group in the
// idempotency table. Held lists the group's messages dead-lettered while it is held, in the
// group's order; its head is the blocker, which the Blocker fields describe. Each message of
// the list is applied only once every message before it has been applied, rejected, discarded
// or skipped, and the hold goes with the last one. The list spreads over as many items as it
// needs: the hold's own item (at table.HoldKey, the one a commit checks) keeps its first
// entries, and overflow pages (at table.PageKey, under the same key prefix) the rest, in the
// order Pages lists them. Version counts the hold's changes: every write of the hold, and of
// its pages, is conditional on the version it read. Package idempotency names it
// operator.Hold.
type Hold struct {
	Key            string `dynamodbav:"pk"`
	Consumer       string `dynamodbav:"consumer"`
	Group          string `dynamodbav:"group"`
	BlockerEventID string `dynamodbav:"blockerEventId"`   // the head's event id
	BlockerMessage string `dynamodbav:"blockerMessageId"` // the head's SQS message id
	BlockerReason  string `dynamodbav:"blockerReason"`    // why the head was dead-lettered
	HeldAt         string `dynamodbav:"heldAt"`           // when the head was held, RFC 3339
	// Held is the whole list, in order, once read by operator.Admin.Hold (the hold's own item
	// keeps only its first entries; its pages the rest).
	Held []Held `dynamodbav:"held"`
	// Skipped are the blockers an operator let the group go on past (operator.Admin.SkipBlocker):
	// none of them holds the group again, and each is kept until table.Retention after the skip.
	Skipped []Decision `dynamodbav:"skipped,omitempty"`
	Pages   []int      `dynamodbav:"pages,omitempty"` // the overflow pages, in the list's order
	Version int64      `dynamodbav:"version"`
	// ExpiresAt is set once nothing is held any more and only Skipped is kept: the item then
	// holds nothing, and TTL deletes it after table.Retention.
	ExpiresAt int64 `dynamodbav:"expiresAt,omitempty"`

	exists bool // read from the table (false: a hold about to be created)
	loaded bool // Held is the whole list: its pages were read (or it has none)
}

// Held is one dead-lettered message of a held group. Package idempotency names it
// port.Held.
type Held struct {
	EventID   string `dynamodbav:"eventId"`   // "" when the message had no usable event id
	MessageID string `dynamodbav:"messageId"` // the id it was first sent as (Delivery.OriginID)
	// PayloadHash is the event's (cloudevent.Event.PayloadHash), "" when it was held before
	// it was decoded: with EventID it tells the message from another payload under the same
	// event id (a conflict).
	PayloadHash string `dynamodbav:"payloadHash,omitempty"`
	Reason      string `dynamodbav:"reason"` // why it was dead-lettered
	HeldAt      string `dynamodbav:"heldAt"`

	page int // the item that keeps it: 0 the hold's own, n its overflow page n; not stored
}

// Decision is an operator's decision about a held message. Package idempotency names it
// operator.Decision.
type Decision struct {
	Held
	By  string `dynamodbav:"by"`
	Why string `dynamodbav:"why"`
	At  string `dynamodbav:"at"`
}

// Same reports whether e and o name one message: by the id the message was first sent as (a
// message held before it was decoded has no event id; one redriven comes back under a new
// message id, carrying its first), or by event id and payload hash (a producer's re-send of
// the same event under a new message id). A reused event id with another payload (a
// conflict) is another message. An entry written before entries carried a hash is known by
// its event id alone.
func Same(e, o Held) bool {
	if e.MessageID != "" && e.MessageID == o.MessageID {
		return true
	}
	return e.EventID != "" && e.EventID == o.EventID && (e.PayloadHash == o.PayloadHash || e.PayloadHash == "" || o.PayloadHash == "")
}

// surely reports whether e and o name one message without Same's allowance for an entry
// written before entries carried a hash: by the id it was first sent as, or by event id and a
// payload hash both carry.
func (e Held) surely(o Held) bool {
	if e.MessageID != "" && e.MessageID == o.MessageID {
		return true
	}
	return e.EventID != "" && e.EventID == o.EventID && e.PayloadHash != "" && e.PayloadHash == o.PayloadHash
}

// FromPort is the entry of the message a port names (port.Engine.HoldAhead).
func FromPort(e port.Held) Held {
	return Held{EventID: e.EventID, MessageID: e.MessageID, PayloadHash: e.PayloadHash, Reason: e.Reason, HeldAt: e.HeldAt}
}

// Port is the entry as a port and an operator see it.
func (e Held) Port() port.Held {
	return port.Held{EventID: e.EventID, MessageID: e.MessageID, PayloadHash: e.PayloadHash, Reason: e.Reason, HeldAt: e.HeldAt}
}

// String names the message as port.Held does.
func (e Held) String() string { return e.Port().String() }

// Holds reports whether h holds its group.
func Holds(h Hold) bool { return len(h.Held) > 0 }

// SkippedAs returns the operator's skip of e, if e was skipped (nil if not).
func SkippedAs(h Hold, e Held) *Decision {
	for i := range h.Skipped {
		if Same(h.Skipped[i].Held, e) {
			return &h.Skipped[i]
		}
	}
	return nil
}

// Clone returns h with lists of its own, so that changing it leaves h as it was.
func Clone(h Hold) Hold {
	h.Held, h.Skipped, h.Pages = slices.Clone(h.Held), slices.Clone(h.Skipped), slices.Clone(h.Pages)
	return h
}

// Loaded reports whether h.Held is the whole list: its pages were read (LoadPages), or it has
// none.
func Loaded(h Hold) bool { return h.loaded }

// State is what h knows beside what it stores: whether it was read from the table, whether
// Held is the whole list (Loaded), and the item that keeps each entry of Held (0 the hold's
// own, n its overflow page n). An operator's copy of a hold (operator.Hold) carries it, so that
// the hold it was shown is written back as it was read.
func State(h Hold) (exists, loaded bool, entryPages []int) {
	entryPages = make([]int, len(h.Held))
	for i, e := range h.Held {
		entryPages[i] = e.page
	}
	return h.exists, h.loaded, entryPages
}

// WithState returns h knowing what State told of a hold: entryPages[i] is the item that keeps
// h.Held[i] (an entry past its end, the hold's own).
func WithState(h Hold, exists, loaded bool, entryPages []int) Hold {
	h.exists, h.loaded = exists, loaded
	for i := range h.Held {
		if i < len(entryPages) {
			h.Held[i].page = entryPages[i]
		}
	}
	return h
}

// Shown marks h as read from the table: a hold an operator was shown and hands back, whose
// write is then conditional on its version (VersionCondition) rather than on its absence.
func Shown(h *Hold) { h.exists = true }

// Add appends e to the held list unless it is there already (it keeps its place) or an
// operator skipped it (it holds the group no more), and reports whether it changed the list:
// an entry held by message id only learns e's event id and payload hash. The entry of e's own
// message is the one that learns, though an earlier entry be of the same event (a producer's
// re-send held by the backstop behind its event's first message): so that it is known as that
// event's when the event is decided or skipped. The whole list must be read (Loaded).
func Add(h *Hold, e Held) bool {
	if SkippedAs(*h, e) != nil {
		return false
	}
	i := slices.IndexFunc(h.Held, func(o Held) bool { return e.MessageID != "" && o.MessageID == e.MessageID })
	if i < 0 {
		i = slices.IndexFunc(h.Held, func(o Held) bool { return Same(o, e) })
	}
	if i >= 0 {
		if h.Held[i].EventID != "" || e.EventID == "" {
			return false
		}
		h.Held[i].EventID, h.Held[i].PayloadHash = e.EventID, e.PayloadHash
		h.describeHead()
		return true
	}
	if Holds(*h) && e.Reason == "" {
		e.Reason = table.Truncate("held behind "+h.Held[len(h.Held)-1].String(), 256)
	}
	e.page = h.pageFor(e)
	h.Held = append(h.Held, e)
	h.ExpiresAt = 0
	h.describeHead()
	return true
}

// Remove takes e's message off the held list, wherever it is, and reports whether it was
// there: its first entry (Same) and every other that surely is it (by the id it was first
// sent as, or by event id and a payload hash both carry). A message can be listed twice: a
// producer's re-send held by the backstop by its message id only, before it was decoded,
// behind its event's first message; once its event is decided both entries hold nothing. An
// entry known by event id alone (written before entries carried a hash) may be another
// payload's, a conflict: only the first match is taken on that ground.
func Remove(h *Hold, e Held) bool { return h.drop(e, true) }

// RemoveSure takes off the entries that surely are e's message: the others of a message whose
// first entry, the head, was taken already.
func RemoveSure(h *Hold, e Held) bool { return h.drop(e, false) }

func (h *Hold) drop(e Held, loose bool) bool {
	kept := make([]Held, 0, len(h.Held))
	for _, o := range h.Held {
		if o.surely(e) || loose && Same(o, e) {
			loose = false
			continue
		}
		kept = append(kept, o)
	}
	if len(kept) == len(h.Held) {
		return false
	}
	h.Held = kept
	h.describeHead()
	return true
}

// RemoveLater takes the entries after the head that surely are e's off the held list, and
// reports whether there were any.
func RemoveLater(h *Hold, e Held) bool {
	if !Holds(*h) {
		return false
	}
	rest := Hold{Held: h.Held[1:]}
	if !RemoveSure(&rest, e) {
		return false
	}
	h.Held = append([]Held{h.Held[0]}, rest.Held...)
	return true
}

// ListedOnPage reports whether an entry after the head on one of the hold's pages surely is e.
func ListedOnPage(h Hold, e Held) bool {
	for _, o := range h.Held[min(1, len(h.Held)):] {
		if o.page != 0 && o.surely(e) {
			return true
		}
	}
	return false
}

// Pop takes the head off the held list, recording it in Skipped when skip is not nil.
func Pop(h *Hold, skip *Decision) bool {
	if !Holds(*h) {
		return false
	}
	head := h.Held[0]
	h.Held = slices.Clone(h.Held[1:])
	if skip != nil {
		skip.Held, skip.page = head, 0
		h.Skipped = append(h.Skipped, *skip)
	}
	h.describeHead()
	return true
}

func (h *Hold) describeHead() {
	if !Holds(*h) {
		return
	}
	head := h.Held[0]
	h.BlockerEventID, h.BlockerMessage, h.BlockerReason, h.HeldAt = head.EventID, head.MessageID, head.Reason, head.HeldAt
}

// item encodes the hold's own item: the entries it keeps (page 0), the pages that keep the
// rest, and the skips still within table.Retention.
func (h Hold) item(now time.Time) (map[string]types.AttributeValue, error) {
	own := []Held{} // an empty list, which size() reads, rather than NULL
	for _, e := range h.Held {
		if e.page == 0 {
			own = append(own, e)
		}
	}
	h.Held, h.Pages = own, h.pageNumbers()
	h.Skipped = slices.DeleteFunc(slices.Clone(h.Skipped), func(d Decision) bool {
		at, err := time.Parse(time.RFC3339Nano, d.At)
		return err == nil && now.Sub(at) > table.Retention
	})
	item, err := attributevalue.MarshalMap(h)
	if err != nil {
		return nil, fmt.Errorf("encode hold of group %s: %w", h.Group, err)
	}
	return item, nil
}

// Decode reads a hold's own item; an empty item is a hold about to be created. A hold
// written before holds kept a list is read as a list of its blocker. A hold with pages is not
// loaded until they are read (LoadPages).
func Decode(item map[string]types.AttributeValue, consumer, group string) (Hold, error) {
	h := Hold{Key: table.HoldKey(consumer, group), Consumer: consumer, Group: group, loaded: true}
	if len(item) == 0 {
		return h, nil
	}
	if err := attributevalue.UnmarshalMap(item, &h); err != nil {
		return h, fmt.Errorf("decode hold of group %s: %w", group, err)
	}
	if h.Key != table.HoldKey(consumer, group) || h.Group != group {
		return h, fmt.Errorf("decode hold of group %s: item %s is the hold of group %q", group, h.Key, h.Group)
	}
	h.exists, h.loaded = true, len(h.Pages) == 0
	if len(h.Held) == 0 && h.Version == 0 && (h.BlockerEventID != "" || h.BlockerMessage != "") {
		h.Held = []Held{{EventID: h.BlockerEventID, MessageID: h.BlockerMessage, Reason: h.BlockerReason, HeldAt: h.HeldAt}}
	}
	return h, nil
}

package engine

import (
	"container/list"
	"sync"
	"time"
)

// cache remembers, for this execution environment, the keys it has committed or seen
// committed, so an immediate redelivery to the same environment is answered without
// DynamoDB. It holds at most size entries, evicting the least recently used. It only ever
// says "known"; a miss always falls through to the conditional write, so it cannot cause a
// double effect. Safe for concurrent use.
type cache struct {
	mu      sync.Mutex
	size    int
	order   *list.List // front = most recent; values are *cacheEntry
	entries map[string]*list.Element
}

type cacheEntry struct {
	key       string
	hash      string
	outcome   Outcome
	reason    string
	expiresAt time.Time
}

func newCache(size int) *cache {
	if size <= 0 {
		return nil
	}
	return &cache{size: size, order: list.New(), entries: make(map[string]*list.Element, size)}
}

// get returns the entry for key if it is cached and not expired at now.
func (c *cache) get(key string, now time.Time) (cacheEntry, bool) {
	if c == nil {
		return cacheEntry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return cacheEntry{}, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expiresAt) {
		c.order.Remove(el)
		delete(c.entries, key)
		return cacheEntry{}, false
	}
	c.order.MoveToFront(el)
	return *e, true
}

func (c *cache) put(e cacheEntry) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.key]; ok {
		*el.Value.(*cacheEntry) = e
		c.order.MoveToFront(el)
		return
	}
	c.entries[e.key] = c.order.PushFront(&e)
	if c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry).key)
	}
}

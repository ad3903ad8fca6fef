package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// routedType is one TYPE=${Queue} route of the relay's OUTBOX_ROUTES.
var routedType = regexp.MustCompile(`([A-Za-z0-9][A-Za-z0-9._-]*)=\$\{[A-Za-z0-9]+\}`)

// publishedTypes are the event types the relay of tpl routes (OUTBOX_ROUTES): the ones some
// producer of the application publishes, sorted.
func publishedTypes(tpl string) []string {
	var types []string
	if m := relayRoutes.FindStringSubmatch(tpl); m != nil {
		for _, r := range routedType.FindAllStringSubmatch(m[2], -1) {
			if !slices.Contains(types, r[1]) {
				types = append(types, r[1])
			}
		}
	}
	slices.Sort(types)
	return types
}

// checkTypes refuses an event type no producer publishes (a typo, most often), naming the ones
// published, unless newType says the consumer's producer is yet to come.
func (c *consumer) checkTypes(tpl string, newType bool) error {
	if newType {
		return nil
	}
	known := publishedTypes(tpl)
	for _, t := range c.Types {
		if !slices.Contains(known, t) {
			return fmt.Errorf("type %q: no producer publishes it (the relay routes %s); for a type of a producer yet to be written, add -new-type (make consumer ... NEW_TYPE=1)",
				t, strings.Join(known, ", "))
		}
	}
	return nil
}

// Package cloudtest runs the onceflow binary on a whole local cloud of template.yaml (the
// local cloud's harness is linked by this test package only, never by the tool or its own
// tests). It has no code besides its tests.
package cloudtest

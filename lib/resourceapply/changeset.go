package resourceapply

import (
	"fmt"
	"sort"
	"strings"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Action is what a verb did to one object.
type Action string

// The actions.
const (
	// Created: the object did not exist and was created.
	Created Action = "Created"
	// Configured: the object existed and the payload's fields were written.
	Configured Action = "Configured"
	// Unchanged: the object already matched; nothing was written.
	Unchanged Action = "Unchanged"
	// Deleted: the object was deleted (release.openshift.io/delete).
	Deleted Action = "Deleted"
	// Skipped: nothing was done on purpose: a create-only object or a
	// ClusterOperator that exists, an object to delete that is already
	// gone, or (dry run) an object whose namespace or type this apply
	// would create first.
	Skipped Action = "Skipped"
	// Failed: the verb failed; see the error.
	Failed Action = "Failed"
)

// Change is the outcome of one verb on one object.
type Change struct {
	// Object is the object's identity.
	Object manifest.ID
	// Action is what happened.
	Action Action
	// Message says why, for Skipped and Unchanged ("create-only: exists").
	Message string
	// DryRun is true when the change was only computed by the server.
	DryRun bool
}

// String prints "Kind/ns/name Action (message)".
func (c Change) String() string {
	s := c.Object.String() + " " + string(c.Action)
	if c.DryRun {
		s += " (dry run)"
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// ChangeSet is the outcome of several verbs, in the order they were asked
// for.
type ChangeSet struct {
	Entries []Change
}

// Add appends changes.
func (cs *ChangeSet) Add(c ...Change) { cs.Entries = append(cs.Entries, c...) }

// Count returns how many entries have action a.
func (cs *ChangeSet) Count(a Action) int {
	n := 0
	for _, c := range cs.Entries {
		if c.Action == a {
			n++
		}
	}
	return n
}

// Summary counts the actions, e.g. "3 created, 1 configured, 40 unchanged".
func (cs *ChangeSet) Summary() string {
	counts := map[Action]int{}
	for _, c := range cs.Entries {
		counts[c.Action]++
	}
	var parts []string
	for _, a := range []Action{Created, Configured, Unchanged, Deleted, Skipped, Failed} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[a], strings.ToLower(string(a))))
			delete(counts, a)
		}
	}
	var rest []string
	for a, n := range counts {
		rest = append(rest, fmt.Sprintf("%d %s", n, strings.ToLower(string(a))))
	}
	sort.Strings(rest)
	parts = append(parts, rest...)
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

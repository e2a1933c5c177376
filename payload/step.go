package payload

import (
	"fmt"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Step is apply-time work that is not an object: a component's step that
// needs the cluster (real UIDs, status subresources). The graph only
// orders it; the Applier given to Run knows how to run it (the command
// runs a lib/component Step). Implementations need only be comparable by
// identity.
type Step interface {
	// Name identifies the step in the graph, progress and errors, e.g.
	// "ingress/default-placement".
	Name() string
}

// StepPlacement places a Step in the task graph: at the run level and
// component its File names, in file-name order among the objects there, and
// after every object in After.
type StepPlacement struct {
	// Step is what runs; never nil.
	Step Step
	// File names the step's place the way an object's file name does, e.g.
	// "generated/0000_05_config-operator_91_ingress-default-placement.step".
	// A name that does not parse puts the step among the files that run
	// last.
	File string
	// After are the objects that must be applied before the step; the
	// step's node requires their nodes, so it is skipped when they fail.
	// Objects that are not in the graph are assumed to exist already.
	After []manifest.ID
}

// StepOrderError says that a step's File places it before an object its
// After names, so the graph cannot run it after that object.
type StepOrderError struct {
	// Step is the step's placement.
	Step StepPlacement
	// Object is the object in After, and File where it is.
	Object manifest.ID
	File   string
}

// Error prints "FILE: step NAME: placed before OBJECT (OBJECT FILE), which it must come after".
func (e *StepOrderError) Error() string {
	return fmt.Sprintf("%s: step %s: placed before %s (%s), which it must come after", e.Step.File, e.Step.Step.Name(), e.Object, e.File)
}

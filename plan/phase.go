package plan

import (
	"context"

	"github.com/payload-apply/payload-apply/payload"
)

// Phase names a stage of Build or Validate, for progress reports and for
// saying where an interrupt stopped a run.
type Phase string

// The phases, in the order Build goes through them (Validate: load, then
// validate, which selects and builds overlays for each profile and
// feature set).
const (
	// PhaseLoad starts loading the payload; PhaseRead,
	// PhaseTemplate and PhaseParse are its stages (payload.LoadStage):
	// reading the files, rendering the manifests/ templates, parsing
	// every file.
	PhaseLoad     Phase = "load"
	PhaseRead     Phase = Phase(payload.StageRead)
	PhaseTemplate Phase = Phase(payload.StageTemplate)
	PhaseParse    Phase = Phase(payload.StageParse)
	// PhaseSelect decides what the selection includes.
	PhaseSelect Phase = "select"
	// PhaseOverlay runs the profile chain's kustomize overlays.
	PhaseOverlay Phase = "overlay"
	// PhaseExtra reads the extra manifests.
	PhaseExtra Phase = "extra-manifests"
	// PhaseComponents runs the components' render hooks.
	PhaseComponents Phase = "components"
	// PhaseGraph builds the task graph.
	PhaseGraph Phase = "graph"
	// PhaseValidate is Validate's checks.
	PhaseValidate Phase = "validate"
)

// onStage reports Load's stages as phases.
func onStage(ctx context.Context, opts Options) func(payload.LoadStage) {
	return func(s payload.LoadStage) { phase(ctx, opts, Phase(s)) }
}

// phase tells opts.OnPhase that p starts, unless ctx has ended.
func phase(ctx context.Context, opts Options, p Phase) {
	if opts.OnPhase != nil && ctx.Err() == nil {
		opts.OnPhase(p)
	}
}

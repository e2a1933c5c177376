package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/plan"
)

// phaseRecorder remembers the phase a command's plan is in, so that an
// interrupt can say where it stopped the run.
type phaseRecorder struct {
	mu    sync.Mutex
	phase plan.Phase
}

type phaseKey struct{}

// withPhaseRecorder gives the run a phase recorder.
func withPhaseRecorder(ctx context.Context) context.Context {
	return context.WithValue(ctx, phaseKey{}, &phaseRecorder{})
}

// phaseFunc returns what plan.Options.OnPhase gets: it records the phase
// and logs it at -v=1 ("Phase" phase="template").
func phaseFunc(ctx context.Context) func(plan.Phase) {
	rec, _ := ctx.Value(phaseKey{}).(*phaseRecorder)
	logger := klog.FromContext(ctx)
	return func(p plan.Phase) {
		if rec != nil {
			rec.mu.Lock()
			rec.phase = p
			rec.mu.Unlock()
		}
		logger.V(1).Info("Phase", "phase", string(p))
	}
}

// currentPhase returns the last phase recorded ("" when none).
func currentPhase(ctx context.Context) plan.Phase {
	rec, _ := ctx.Value(phaseKey{}).(*phaseRecorder)
	if rec == nil {
		return ""
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.phase
}

// phaseWords says what a phase does, for "interrupted while ...".
func phaseWords(p plan.Phase) string {
	switch p {
	case plan.PhaseLoad, plan.PhaseRead:
		return "reading the payload"
	case plan.PhaseTemplate:
		return "rendering the manifests/ templates"
	case plan.PhaseParse:
		return "parsing the payload"
	case plan.PhaseSelect:
		return "selecting the manifests"
	case plan.PhaseOverlay:
		return "running the overlays"
	case plan.PhaseExtra:
		return "reading the extra manifests"
	case plan.PhaseComponents:
		return "rendering the components"
	case plan.PhaseGraph:
		return "building the task graph"
	case plan.PhaseValidate:
		return "validating"
	case "":
		return "starting"
	}
	return string(p)
}

// interruptedError turns the error of a command that SIGINT or SIGTERM
// (ctx, main's signal context) stopped into exit code 130 and one line
// saying so and where, unless the command reported the interrupt itself.
// A stdout closed by its reader is not an interrupt to report
// (reportError keeps it quiet).
func interruptedError(ctx context.Context, c *cobra.Command, err error) error {
	if err == nil || ctx.Err() == nil || context.Cause(ctx) == errStdoutClosed {
		return err
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.Code == exitInterrupted {
		return err
	}
	return &exitError{Code: exitInterrupted, Err: fmt.Errorf("interrupted while %s: %s stopped before it finished; nothing was written; run the same command again", phaseWords(currentPhase(ctx)), c.Name())}
}

package cincinnati

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Matcher says whether matching rules match the cluster: true, false, or
// an error when none of them could be evaluated. lib/clustercondition's
// Evaluator is one.
type Matcher interface {
	Match(ctx context.Context, rules []configv1.ClusterCondition) (bool, error)
}

// The Recommended condition of a conditional update, and its reasons (the
// CVO's; a single risk that applies gives its own name as the reason when
// it is a valid one).
const (
	ConditionRecommended = "Recommended"

	ReasonNotExposedToRisks       = "NotExposedToRisks"
	ReasonAllExposedRisksAccepted = "AllExposedRisksAccepted"
	ReasonExposedToRisks          = "ExposedToRisks"
	ReasonEvaluationFailed        = "EvaluationFailed"
	ReasonMultipleReasons         = "MultipleReasons"
)

// reasonPattern is what the API accepts as a condition's reason.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// Exposure is whether a risk applies to the cluster.
type Exposure struct {
	// Risk is the risk as evaluated: of the newest update that declares it.
	Risk configv1.ConditionalUpdateRisk
	// Applies: its rules match the cluster. Meaningless when Err is set.
	Applies bool
	// Err says why its rules could not be evaluated.
	Err error
}

// Verdict is the outcome of one conditional update's risks.
type Verdict struct {
	// Exposed are the risks that apply and are not accepted; Accepted
	// those that apply and are; Failed those that could not be evaluated.
	// In the update's order.
	Exposed, Accepted, Failed []string
	// Recommended is the Recommended condition.
	Recommended metav1.Condition
}

// Evaluation is the outcome of Evaluate.
type Evaluation struct {
	// Available are the recommended updates: the unconditional ones and
	// the conditional ones Recommended=True, newest first.
	Available []configv1.Release
	// Conditional are the conditional updates, each with its Recommended
	// condition set.
	Conditional []configv1.ConditionalUpdate
	// Verdicts are by conditional update, in Conditional's order.
	Verdicts []Verdict
	// Risks are the exposures, by risk name.
	Risks map[string]Exposure
}

// Evaluate evaluates each risk of the conditional updates once, by name,
// through m (the CVO takes the declaration of the newest update that
// carries a name), then judges every conditional update (Judge) and sets
// its Recommended condition at now: its other conditions are kept, and
// so is the condition's LastTransitionTime when its status does not
// change. accepted are the names of the risks the cluster's
// administrators accept (spec.desiredUpdate.acceptRisks). updates and
// conditional are not changed. m is called once per risk name: a cache
// behind it makes repeated evaluations cheap.
func Evaluate(ctx context.Context, m Matcher, updates []configv1.Release, conditional []configv1.ConditionalUpdate, accepted []string, now metav1.Time) *Evaluation {
	ev := &Evaluation{Risks: map[string]Exposure{}}
	order := make([]int, len(conditional))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		return newer(conditional[order[i]].Release.Version, conditional[order[j]].Release.Version)
	})
	for _, i := range order {
		for _, r := range conditional[i].Risks {
			if _, done := ev.Risks[r.Name]; done {
				continue
			}
			e := Exposure{Risk: *r.DeepCopy()}
			e.Applies, e.Err = m.Match(ctx, r.MatchingRules)
			ev.Risks[r.Name] = e
		}
	}
	acc := make(map[string]bool, len(accepted))
	for _, a := range accepted {
		acc[a] = true
	}
	images := map[string]bool{}
	for _, r := range updates {
		if !images[r.Image] {
			images[r.Image] = true
			ev.Available = append(ev.Available, *r.DeepCopy())
		}
	}
	for _, u := range conditional {
		u = *u.DeepCopy()
		v := Judge(u, ev.Risks, acc)
		v.Recommended.LastTransitionTime = now
		meta.SetStatusCondition(&u.Conditions, v.Recommended)
		ev.Conditional = append(ev.Conditional, u)
		ev.Verdicts = append(ev.Verdicts, v)
		if v.Recommended.Status == metav1.ConditionTrue && !images[u.Release.Image] {
			images[u.Release.Image] = true
			ev.Available = append(ev.Available, u.Release)
		}
	}
	sort.SliceStable(ev.Available, func(i, j int) bool { return newer(ev.Available[i].Version, ev.Available[j].Version) })
	return ev
}

// Judge decides whether u is recommended given the exposures by risk name
// and the accepted risk names, as the CVO does: recommended (True) when
// no risk applies (NotExposedToRisks) or every one that applies is
// accepted (AllExposedRisksAccepted); not recommended (False) when one
// applies (its name as the reason, or ExposedToRisks when the name is not
// a valid reason) or several do (MultipleReasons); Unknown when a risk
// could not be evaluated (EvaluationFailed; MultipleReasons with one that
// applies too, then False). A risk whose evaluation failed is not
// recommended even when accepted, as in the CVO. A risk missing from
// exposures counts as failed.
func Judge(u configv1.ConditionalUpdate, exposures map[string]Exposure, accepted map[string]bool) Verdict {
	var v Verdict
	var msgs []string
	for _, r := range u.Risks {
		e, ok := exposures[r.Name]
		switch {
		case !ok || e.Err != nil:
			err := e.Err
			if !ok {
				err = fmt.Errorf("not evaluated")
			}
			v.Failed = append(v.Failed, r.Name)
			msgs = append(msgs, fmt.Sprintf("Could not tell whether risk %s applies to this cluster: %v. %s %s", r.Name, err, r.Message, r.URL))
		case !e.Applies:
		case accepted[r.Name]:
			v.Accepted = append(v.Accepted, r.Name)
		default:
			v.Exposed = append(v.Exposed, r.Name)
			msgs = append(msgs, r.Message+" "+r.URL)
		}
	}
	c := metav1.Condition{Type: ConditionRecommended}
	switch {
	case len(v.Exposed) == 0 && len(v.Failed) == 0 && len(v.Accepted) == 0:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonNotExposedToRisks
		c.Message = "The update is recommended: none of its risks apply to this cluster."
	case len(v.Exposed) == 0 && len(v.Failed) == 0:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonAllExposedRisksAccepted
		c.Message = fmt.Sprintf("The update is recommended: the risks that apply to this cluster (%s) are accepted by its administrators.", strings.Join(v.Accepted, ", "))
	case len(v.Exposed) == 0:
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonEvaluationFailed
	case len(v.Exposed) == 1 && len(v.Failed) == 0:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonExposedToRisks
		if reasonPattern.MatchString(v.Exposed[0]) {
			c.Reason = v.Exposed[0]
		}
	default:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonMultipleReasons
	}
	if len(msgs) > 0 {
		c.Message = strings.Join(msgs, "\n\n")
	}
	v.Recommended = c
	return v
}

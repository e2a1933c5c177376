package nodetuning

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWithTransitionTimes(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	now := time.Date(2026, 2, 3, 4, 5, 6, 789, time.FixedZone("x", 3600))
	nowStamp := metav1.NewTime(time.Date(2026, 2, 3, 3, 5, 6, 0, time.UTC))
	at := func(c Condition, ts metav1.Time) Condition { c.LastTransitionTime = &ts; return c }

	previous := []Condition{
		at(Condition{Type: ConditionAvailable, Status: "True"}, then),
		at(Condition{Type: ConditionUpgradeable, Status: "True"}, then),
		at(Condition{Type: ConditionProgressing, Status: "False"}, then),
		at(Condition{Type: ConditionDegraded, Status: "False"}, then),
	}
	cases := []struct {
		name     string
		conds    []Condition
		previous []Condition
		want     []Condition
	}{
		{"first status: now", availableConditions(), nil, []Condition{
			at(Condition{Type: ConditionAvailable, Status: "True"}, nowStamp),
			at(Condition{Type: ConditionUpgradeable, Status: "True"}, nowStamp),
			at(Condition{Type: ConditionProgressing, Status: "False"}, nowStamp),
			at(Condition{Type: ConditionDegraded, Status: "False"}, nowStamp),
		}},
		{"unchanged: the old times", availableConditions(), previous, previous},
		{"degraded: the changed conditions move", degradedConditions("R", "M"), previous, []Condition{
			at(Condition{Type: ConditionAvailable, Status: "False"}, nowStamp),
			at(Condition{Type: ConditionUpgradeable, Status: "False"}, nowStamp),
			at(Condition{Type: ConditionProgressing, Status: "False"}, then),
			at(Condition{Type: ConditionDegraded, Status: "True", Reason: "R", Message: "M"}, nowStamp),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := withTransitionTimes(tc.conds, tc.previous, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, c := range tc.conds {
				if c.LastTransitionTime != nil {
					t.Error("the input was modified")
				}
			}
		})
	}
}

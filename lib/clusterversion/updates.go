package clusterversion

import (
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SetUpdates sets what the update service said of the cluster, as the CVO
// writes it: availableUpdates (the recommended updates; null when none,
// the field being required and nullable), conditionalUpdates (omitted
// when none) and the RetrievedUpdates condition (its LastTransitionTime
// kept unless its status changes).
func SetUpdates(st *configv1.ClusterVersionStatus, available []configv1.Release, conditional []configv1.ConditionalUpdate, retrieved configv1.ClusterOperatorStatusCondition, now metav1.Time) {
	st.AvailableUpdates, st.ConditionalUpdates = nil, nil
	if len(available) > 0 {
		st.AvailableUpdates = available
	}
	if len(conditional) > 0 {
		st.ConditionalUpdates = conditional
	}
	retrieved.Type = RetrievedUpdates
	SetCondition(&st.Conditions, retrieved, now)
}

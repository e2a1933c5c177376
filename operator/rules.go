package operator

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// Rules returns what the operator needs of the managed cluster besides
// what applying its payload needs (lib/permissions' ClusterRole of the
// plan, which reads the cluster's profile and the ClusterOperators): to
// watch and write the cluster's record, ClusterVersion "version" (its
// status through the status subresource), and to watch the
// ClusterOperators for the metrics.
func Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusterversions"}, Verbs: []string{"create", "get", "list", "patch", "update", "watch"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusterversions/status"}, Verbs: []string{"get", "patch", "update"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusteroperators"}, Verbs: []string{"get", "list", "watch"}},
	}
}

// LeaseRules returns what the replicas need in the Lease's namespace:
// read, create and renew the Lease named name (create cannot be limited to
// a name: the API server does not know it before the object exists).
func LeaseRules(name string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{name}, Verbs: []string{"get", "update"}},
	}
}

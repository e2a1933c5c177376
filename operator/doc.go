// Package operator keeps a cluster at its release, as the
// cluster-version operator (CVO) does: `payload-apply operator` is a thin
// command around it.
//
// An Operator runs for as long as its context lives. Several replicas may
// run at once: they elect a leader with client-go's leaderelection on a
// coordination.k8s.io Lease, which may live in another cluster than the
// one managed (HyperShift's shape: the lease in the management cluster,
// the objects in the hosted one). Only the leader talks to the managed
// cluster; the others wait for the lease. When the Operator's context
// ends, the leader stops its pass (nothing new starts; what is in flight
// gets a grace), then releases the lease, so that another replica takes
// over at once; when the leader loses the lease, it stops writing at once
// and Run returns ErrLeaseLost (the CVO exits then, and is restarted).
//
// The leader works in passes, each one of the engine's, which keeps the
// cluster's record (ClusterVersion "version") as apply and upgrade keep
// it: the operator has no record or history logic of its own. While the
// record has no release completed, clustersync.Apply installs the
// operator's payload (the CVO's initializing state, its flattened install
// order; the record is made). Once it has, clustersync.Apply applies the
// release the cluster runs again every Options.Resync with jitter (the
// CVO's reconciling state and reconcile order: with nothing drifted a
// pass writes nothing; an object edited or deleted since is repaired, and
// reported as drift). When spec.desiredUpdate names a release the cluster
// has not reached, the pass is clustersync.PlanUpgrade and RunUpgrade (the
// preconditions, force, the history, the conditions, the update order and
// its waits); a rejected request sets ReleaseAccepted=False with the
// reason (the preconditions by name) and changes nothing else, and the
// running release is still reconciled. A failed pass is retried sooner,
// backing off as the CVO does. A change of the ClusterVersion's spec,
// seen through a watch (an informer, not polling), starts a pass at once.
// The ClusterOperators are watched the same way, for the metrics.
//
// Which release next (updates.go): beside the passes, the leader asks the
// update service of the record's spec.upstream for spec.channel (the
// cluster's id, architecture and version; lib/updateservice, with
// backoff) every Options.Updates.Interval and at once when the spec
// changes, evaluates the risks of the conditional updates against
// Prometheus (lib/clustercondition: each rule once per period) and writes
// status.availableUpdates, status.conditionalUpdates (each with its
// Recommended condition) and RetrievedUpdates, only when they change; a
// service that fails keeps the updates it gave last (RetrievedUpdates
// False). A spec.desiredUpdate naming a version without an image resolves
// through them: a conditional update that is not recommended is refused
// unless its risks are in spec.desiredUpdate.acceptRisks, and the
// accepted risks are recorded in the history.
//
// Observability: Handler serves /healthz, /readyz and /metrics
// (Prometheus, client_golang), with the CVO's metric names where they
// overlap (cluster_version, cluster_operator_up,
// cluster_operator_conditions, cluster_operator_condition_transitions,
// cluster_version_payload, cluster_operator_payload_errors) and the
// operator's own under payload_apply_operator_ (passes, their duration,
// requests and writes, drift, leadership). Logs are structured klog lines
// through the context's logger.
//
// May import: clustersync, lib/cincinnati, lib/clustercondition,
// lib/clusterversion, lib/requests, lib/resourceapply, lib/updateservice,
// plan.
package operator

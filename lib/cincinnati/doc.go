// Package cincinnati is the model of the update service protocol
// (Cincinnati) as the cluster-version operator (CVO) uses it: which
// release a cluster may go to next.
//
//   - Query: the parameters of a graph request (channel, arch, the
//     cluster's id, the version it runs) and Check, the CVO's checks of
//     its configuration before it asks (NoUpstream, NoChannel, ...).
//   - Graph: the service's JSON (nodes, edges as node-index pairs, and
//     conditional edges between versions with their risks), read by
//     Parse within Limits (bytes, nodes, edges, conditional edges, risks)
//     and checked: a node without a semantic version, two nodes of one
//     version, an edge to a node that does not exist are errors naming
//     the node or edge.
//   - Graph.Updates: what the graph says of one version, as the CVO's
//     client reads it: the node of the version (VersionNotFound when the
//     channel lacks it), the updates its edges recommend, the conditional
//     updates with their risks (a target listed both ways is
//     conditional; matching rules that no cluster could evaluate are
//     pruned, and a target left without any is dropped, as the CVO does,
//     with a warning naming it).
//   - Evaluate: each risk's matching rules evaluated once (through a
//     Matcher, whatever the number of edges that carry it), the
//     Recommended condition of each conditional update with the CVO's
//     reasons (NotExposedToRisks, the risk's name or ExposedToRisks,
//     EvaluationFailed, AllExposedRisksAccepted, MultipleReasons), and
//     the available updates: the unconditional ones plus the recommended
//     conditional ones. A rule that cannot be evaluated makes its update
//     not recommended; risks the cluster's administrators accept
//     (spec.desiredUpdate.acceptRisks) do not.
//   - Error: a failure with the RetrievedUpdates reason the CVO gives it
//     (RemoteFailed, ResponseFailed, ResponseInvalid, VersionNotFound,
//     ...); RetrievedCondition turns an outcome into the condition.
//
// The texts are the package's own; the rules follow the CVO's
// pkg/cincinnati and pkg/cvo/availableupdates.go. Fetching a graph is
// lib/updateservice's, evaluating PromQL rules lib/clustercondition's,
// serving graphs updategraph's.
//
// May import: nothing.
// Cluster I/O: none.
package cincinnati

// Package resourceapply applies objects to a cluster and reads their
// readiness, the way the cluster-version operator does at install time.
//
// It owns one Manager with a file per verb: Apply (server-side apply with
// field manager "payload-apply" and forced conflicts, the create-only and
// delete annotations, ClusterOperators created once and never overwritten),
// Delete, Wait (readiness: kstatus for generic kinds, and readers of its
// own for CustomResourceDefinitions, Deployments, Jobs and ClusterOperators,
// the last with the CVO's rules), and Diff/DiffAll, which compute what Apply
// would do without writing: a Preview per object with the live object and
// the merged one (the live object itself when Apply would not touch it,
// found with the same InSync test and no dry run; else the result of a
// server-side dry run), reading live objects as Apply does (below).
// Results are data: a Change per object with a typed Action, collected in
// a ChangeSet; failures are *ApplyError values carrying the object, a
// classified Reason and the cause.
//
// Apply reads the live object first and writes only when the payload's
// fields differ from it, a field it owned left the payload, or another
// field manager set a field where the cluster-version operator's merge
// would not leave it (InSync; the CVO's merge per kind is data, in
// merge_rules.go), so applying an unchanged payload again makes no write
// requests and leaves every resourceVersion as it was; an object in a
// namespace the Manager created is known to be new and is not read. What
// differs is written by server-side apply; what another manager added
// where the CVO would take it out is removed by a JSON patch that tests
// each value first. A Deployment or DaemonSet annotated
// config.openshift.io/inject-proxy gets the cluster's proxy settings first,
// as the CVO gives them. Absent says, before anything is written, which
// kinds and namespaces the objects need that the server lacks. Told of the apply's objects
// (ExpectObjects), it reads a kind with several of them by one bounded
// LIST instead of a GET each, never listing Secrets; DiffAll reads the
// same way. Objects of built-in kinds are seen through their Go types
// first, as the CVO decodes them (fields the type lacks are dropped), and
// CRD schemas through JSONSchemaProps.
// Transient failures (connection errors, timeouts, 429 with Retry-After,
// 5xx, conflicts) are retried with backoff; an object whose kind or
// namespace the apply creates (ExpectKinds, ExpectNamespaces) waits for it;
// permanent failures (invalid, forbidden, a resource type or namespace
// nothing creates) fail at once, without a write.
//
// RunStep runs a component's apply-time step (lib/component) with the
// Manager's client and RESTMapper, reset after CustomResourceDefinitions
// land, and reports whether it wrote anything (StepResult) or a *StepError.
//
// The package imports client-go, apimachinery, openshift/api, cli-utils'
// kstatus, lib/manifest (for object identities and annotation keys) and
// lib/component (the Step interface and the Cluster a step gets). It
// never imports payload or the command, and it does no logging: callers get
// data and errors. The one thing it does to logging: requests about Secrets
// run with a context logger that stops below client-go's body level (V(8)),
// so that no verbosity prints Secret data. A Manager is safe for concurrent
// use.
//
// May import: lib/component, lib/manifest, lib/redact.
package resourceapply

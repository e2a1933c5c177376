// Package clustersync runs a built plan against a cluster: it applies it
// (a first install or a re-apply), waits for what it applied, compares it
// with the cluster (the live diff) and reads how far the cluster has come
// (status). It is the engine the command line, the benchmarks and the
// operator share: what `payload-apply apply`, `diff --kubeconfig` and
// `status` do, without flags, printing or exit codes.
//
// Start connects to a cluster (Connect), checks the server, resolves the
// cluster's profile and builds the plan; Apply, Diff and Status take the
// Session it returns. Progress goes out as typed events (Event) to the
// Sink the caller gives: the command line's text and JSON printers are two
// sinks, the operator a third. Results come back as values (ApplyReport,
// DiffReport, StatusReport), never printed.
//
// A caller that plans the same payload again and again (the operator's
// reconcile passes, a re-apply, a live diff) sets StartOptions.Plan's
// PlanCache: each pass after the first decodes the payload's parse,
// found by the payload's content digest, instead of parsing it.
//
// Cancellation: the context Apply is given is the interrupt. When it
// ends, nothing new starts; the objects in flight get ApplyOptions.Grace
// to finish (ApplyOptions.Abort cuts that short), and the report counts
// what was applied, failed, stopped and not started, so that a re-run
// converges.
//
// May import: lib/clusterversion, lib/component, lib/diff, lib/manifest,
// lib/redact, lib/requests, lib/resourceapply, lib/safefs, payload, plan,
// profiles, upgrade.
package clustersync

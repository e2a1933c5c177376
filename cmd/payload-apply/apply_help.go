package main

// applyHelp is the help of 'payload-apply apply'.
const applyHelp = `Applies the objects the selection includes to the cluster, as the
cluster-version operator (CVO) does, and keeps the cluster's record, the
config.openshift.io/v1 ClusterVersion "version", as the CVO keeps it.

The record says which release the cluster runs, and so what apply does: on a
cluster without one it installs the release (the record is made, with the
ClusterVersion CRD from the payload); on one that runs this release it
applies it again; an install or update of this release that stopped is
finished. Another release version is refused (exit 2): that is 'upgrade'.
Its status says how far the apply has come (Progressing "Working towards V:
N of M done (P% complete)"); when everything was applied the release is
Completed in its history ('status' shows it). The record names the payload
by absolute path and digest (the built-in one
embedded://payload-apply@sha256:..., which --payload accepts too).
--dry-run writes no record.

1. Stage (the install order only): every CustomResourceDefinition and
   Namespace of the plan is applied ahead of the graph, from the start, in a pool of its own (up to
   --parallelism at once), and each CustomResourceDefinition is waited on
   until Established. Payloads create custom resources at run levels before
   their CRD (a FeatureGate at 05, its CRD at 10), and objects in namespaces
   that a later run level creates; the CVO copes by retrying every object
   until it goes in, we by staging what other objects need: an object whose
   CRD or namespace the stage creates waits for it (up to two minutes)
   instead of failing. 'graph' and 'render --list' show the graph's own
   order; staged objects keep their place in it (a node that reaches one
   waits for it and takes its outcome; nothing is applied twice).
2. The task graph ('payload-apply graph'), each component's files serially,
   at most --parallelism nodes at once, in the CVO's order for the record's
   state (--order to choose): "install" (FlattenByNumberAndComponent) on a
   cluster without a release: every component of every run level at once,
   Jobs the only barriers; "reconcile" for the release the cluster runs:
   the same nodes in the CVO's permuted order; "update" (run levels in
   series, components in parallel) to finish an update that stopped, with
   the update's waits when 'upgrade' started it. A failed object stops its
   component's node and what comes after it; everything else goes on.
   An object whose kind has no API on the server and no CRD in the payload,
   or whose namespace nothing creates, fails at once as
   "resource type missing" or "namespace missing" and stops nothing else.
   Components' steps (what needs the cluster: a status subresource, real
   UIDs) are tasks of the graph too, after the objects they need ('graph'
   shows them): a step runs once, with retries on transient failures, and
   fails as "step NAME: reason: cause"; it is not run when an object it
   needs failed. Its writes are counted like the objects'.
3. With --wait: every object applied is waited on until ready or --timeout:
   ClusterOperators until Available=True, Degraded not True and every version
   their manifest lists is reported with the same value (the reference
   payload lists the placeholder 0.0.1-snapshot: that is what is waited for;
   on a cluster nothing runs the operators of, 'go run ./hack/play-operators'
   plays them); CustomResourceDefinitions until Established; Jobs until
   complete; Deployments only for failure conditions (a bootstrap does not
   wait for a rollout: the operator's ClusterOperator says when it works);
   anything else by kstatus. Steps that write a status nothing else writes
   (the platform operators' aggregate ClusterOperator, from the
   BundleDeployments) run again before every poll, and their
   ClusterOperators are waited for at the release version.
   The wait ends as soon as the outcome is certain: when everything is
   ready; at once, without waiting, when objects failed to apply (no waiting
   fixes that); at the first object reporting a failure it will not leave
   (a Job failed, a CustomResourceDefinition's names rejected); or at
   --timeout, naming every object not ready. --wait-on-failure waits for
   everything else anyway, until ready or --timeout.
   While waiting, stderr says every 30 s (or when it changes) the time
   waited, when the wait gives up, and what is pending grouped by reason
   ("12 not Available: ClusterOperator/dns, ...").

Before anything is sent, every object is checked as the API server would
check it, for the types known offline ('payload-apply validate' reports the
same): built-in kinds against their types, custom resources against the
OpenAPI schema of their CustomResourceDefinition in the payload, and every
object's apiVersion, kind, name, namespace, labels and annotations (a
non-string annotation value, "replicas: three", a kind: List). An object
that fails stops the apply before its first write, with every such error
on its own line (FILE#DOC: Kind/ns/name: field: what is wrong);
--validate=false leaves the checks to the server.

Objects are applied with server-side apply (field manager payload-apply,
conflicts forced), one request per object, after reading the live object
(not needed in a namespace this apply created; a kind with several objects
is read by one list, per namespace for ConfigMaps, never for Secrets): an
object already as the payload says is not written, so applying again makes
no writes and changes no resourceVersion. Objects annotated
release.openshift.io/create-only and ClusterOperators are created once and
never updated; objects annotated release.openshift.io/delete are deleted.
Transient failures (connection refused or reset, timeouts, 429, 5xx,
conflicts) are retried with backoff for up to two minutes per request
(--retry-timeout), so an API server restart is ridden out; an outage longer
than that fails the objects in flight as "server unavailable", and the
apply can simply be run again, as an interrupted one can. A rejection no
retry can fix (invalid, an object too large for etcd, a
CustomResourceDefinition the server refused, for the objects of its kind)
fails at once, naming the object and why. Jobs are barriers and are waited
on until complete.

--dry-run=server (or --dry-run alone; --dry-run=none is the default) sends
every write as a server-side dry run: nothing changes. kubectl's
--dry-run=client has no counterpart: 'render' and 'diff' show what would be
applied without a cluster. Objects in namespaces, or of kinds, that the same apply would
create first are reported as skipped.

Progress goes to stderr: a line per run level ("N of M done (P%)"), every
5 s the objects that have taken longer than that and what each waits for (a
CRD, a namespace, a retry), and with --wait the wait's state (above); a
progress bar when stderr is a terminal. Every apply ends, on stderr, with
its failures grouped by reason (a line with the counts, then per reason a
line saying what it means and an "error: " line per failure), what was
skipped on purpose and why (an object to delete already gone, a
create-only object or ClusterOperator that exists, in a dry run what this
apply would create first), how the wait ended, and the summary line last.
Server warnings name the object whose request they came with.

-o json writes one JSON object per line on stdout instead of the progress
lines, each with "schemaVersion": 1 (docs/cli.md, "apply -o json", and
docs/apply-events.schema.json): "stage", "task" (file, doc, object or
step, action, error, reason), "runLevel", "slow", "wait" (ready, total,
pending with reasons, elapsed, deadline), "step" (a step run again while
waiting, when it wrote or failed), "warning" (with the object's kind,
namespace and name), "interrupt" and a final "summary" with the changes of
objects and steps, the errors and their counts by reason, the skipped
objects by why, how the wait ended, and the request counts ("reads",
"writes" and "byVerb": GET, LIST, WATCH, DISCOVERY, POST, PUT, PATCH,
DELETE). The failures grouped by reason still go to stderr.

The profile is --profile, else the "profile" key of ConfigMap
openshift-config/cluster-profile when the cluster has it, else the default.

TLS: the API server's certificate is verified against the kubeconfig's
certificate authority; --insecure-skip-tls-verify (or insecure-skip-tls-verify:
true in the kubeconfig's cluster) turns that off, with a warning on stderr.
Nothing printed shows a bearer token, password, client key or the values of
a Secret's data or stringData, at any -v (docs/reliability.md, "Security").
'payload-apply rbac' prints the ClusterRole this needs; a forbidden request
names the verb, resource, API group and namespace the role lacks.

Every request has a deadline (--request-timeout, default 30s), so a
connection that stalls is given up and retried on a new one instead of
hanging the apply.

SIGINT (Ctrl-C) or SIGTERM stops the apply: nothing new is started, the
objects in flight get up to 10 s to finish (1 s after SIGTERM, which asks
a process to end soon; a second interrupt cancels them at once), and the
summary says how many objects were applied, failed, stopped in flight and
not started, and how many steps ran ("interrupted: ... run the same
command again to finish"); the JSON summary has "interrupted": true. A stdout whose reader went away ('apply -o json |
head') stops the apply the same way, said on stderr: the apply never dies
half-way. Running the same command again finishes the job.

Signatures: a payload pulled from a registry, and any payload when
--verify-keyring or --verify-cosign-key is given, must be verified before
anything is applied: an atomic signature (the CVO's) of its digest by every
--verify-keyring, found in a --signature-store or the cluster's signature
ConfigMaps, and a cosign signature by every --verify-cosign-key beside the
image in its registry. An unverified payload is refused (exit 1, naming the
digest and the reason) unless --allow-unverified, which goes on with a
warning. See 'payload-apply help verify'.

Exit codes: 0 everything applied (and ready, with --wait); 1 some object
failed or was not ready in time, or the payload could not be read; 2 usage
error, a release other than the cluster's, no cluster configured, the cluster unreachable, or the credentials
refused or lacking a permission (forbidden, unauthorized); 130 interrupted
by SIGINT or SIGTERM, or stdout closed.`

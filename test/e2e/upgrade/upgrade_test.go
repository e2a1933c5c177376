//go:build e2e

package upgrade_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/internal/clusterplay"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

var (
	deployments     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	clusterVersions = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusterversions"}
	configMaps      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	roleBindings    = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
	clusterRoles    = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	networkPolicies = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	widgets         = schema.GroupVersionResource{Group: "upgrade.payload-apply.test", Version: "v1", Resource: "widgets"}
)

func record(t *testing.T, dc dynamic.Interface) *configv1.ClusterVersion {
	t.Helper()
	u, err := dc.Resource(clusterVersions).Get(t.Context(), "version", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cv configv1.ClusterVersion
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cv); err != nil {
		t.Fatal(err)
	}
	return &cv
}

func condition(cv *configv1.ClusterVersion, typ string) configv1.ClusterOperatorStatusCondition {
	for _, c := range cv.Status.Conditions {
		if string(c.Type) == typ {
			return c
		}
	}
	return configv1.ClusterOperatorStatusCondition{}
}

// history prints the record's history as "VERSION STATE", newest first,
// and checks that every entry but the newest has a completion time.
func history(t *testing.T, cv *configv1.ClusterVersion) []string {
	t.Helper()
	var out []string
	for i, h := range cv.Status.History {
		out = append(out, h.Version+" "+string(h.State))
		if i > 0 && h.CompletionTime == nil {
			t.Errorf("history entry %s has no completion time", h.Version)
		}
	}
	return out
}

// upgradePlan is the part of `upgrade --dry-run -o json` the test reads.
type upgradePlan struct {
	Type          string `json:"type"`
	Blocked       bool   `json:"blocked"`
	Continuing    bool   `json:"continuing"`
	Preconditions []struct {
		Name, Reason, Message string
		Passed, Forced        bool
	} `json:"preconditions"`
	Implicit []struct{ Capability, Object string } `json:"implicitlyEnabledCapabilities"`
	Creates  []planItem                            `json:"creates"`
	Changes  []planItem                            `json:"changes"`
	Kept     []planItem                            `json:"kept"`
	Deletes  []planItem                            `json:"deletes"`
	Orphans  []planItem                            `json:"orphans"`
	Moves    []planItem                            `json:"moves"`
}

type planItem struct {
	Kind, Namespace, Name, Place, From string
}

func (p planItem) object() string {
	if p.Namespace == "" {
		return p.Kind + "/" + p.Name
	}
	return p.Kind + "/" + p.Namespace + "/" + p.Name
}

func objects(items []planItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.object())
	}
	sort.Strings(out)
	return out
}

// blockedBy returns the preconditions that block, as "NAME REASON".
func (p upgradePlan) blockedBy() []string {
	var out []string
	for _, v := range p.Preconditions {
		if !v.Passed && !v.Forced && v.Reason != "" {
			out = append(out, v.Name+" "+v.Reason)
		}
	}
	return out
}

func dryRun(t *testing.T, kc string, to string, args ...string) (upgradePlan, result) {
	t.Helper()
	r := cli(t, t.Context(), append([]string{"upgrade", kc, "--to", to, "--dry-run", "-o", "json"}, args...)...)
	var p upgradePlan
	if err := json.Unmarshal([]byte(r.Stdout), &p); err != nil {
		t.Fatalf("dry run to %s: exit %d, not a plan: %v\nstdout:\n%.3000s\nstderr:\n%s", to, r.Code, err, r.Stdout, r.Stderr)
	}
	return p, r
}

// written maps the objects a run wrote to how ("Created", "Configured",
// "Deleted").
func written(events []event) map[string]string {
	out := map[string]string{}
	for _, e := range events {
		if e.Event == "task" && e.Kind != "" {
			switch e.Action {
			case "Created", "Configured", "Deleted":
				out[e.object()] = e.Action
			}
		}
	}
	return out
}

// objectWrites is a run's writes (POST, PUT, PATCH, DELETE) but the
// record's.
func objectWrites(t *testing.T, events []event) int64 {
	t.Helper()
	s := events[len(events)-1]
	if s.Event != "summary" || s.Requests == nil || s.RecordW == nil {
		t.Fatalf("no summary with requests and record writes: %+v", s)
	}
	v := s.Requests.ByVerb
	return v["POST"] + v["PUT"] + v["PATCH"] + v["DELETE"] - int64(*s.RecordW)
}

// TestUpgrade installs release A (the real payload) without the Insights
// capability and moves the cluster through the releases genupgrade makes
// of it, checking the record, the plan, the preconditions and the objects
// at every step, with interrupts, a crash and an API server restart on the
// way; the test plays the operators and the Deployment controller.
func TestUpgrade(t *testing.T) {
	a := realpayload.Dir(t)
	if len(releases) == 0 {
		t.Fatal("the releases to upgrade to were not generated: the real payload is missing")
	}
	s := apiserver.Shared(t)
	kc := "--kubeconfig=" + s.Kubeconfig
	dc, err := dynamic.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := clusterplay.Environment(ctx, dc); err != nil {
		t.Fatal(err)
	}
	p := clusterplay.NewPlayer(dc)
	t.Cleanup(p.Stop)
	release := func(t *testing.T, dir string) {
		t.Helper()
		if err := p.Release(ctx, dir); err != nil {
			t.Fatal(err)
		}
	}
	release(t, a)
	b1, b2, b3 := releases[zStream], releases[minor], releases[twoMinor]
	v1 := variants[zStream]

	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, f) {
			t.FailNow()
		}
	}

	step("install A", func(t *testing.T) {
		r := cli(t, ctx, "apply", kc, "--payload", a, "--baseline-capability-set", "None", "--additional-capabilities", clusterplay.CapabilitiesWithout("Insights"), "-o", "json")
		events := parseEvents(t, r.Stdout)
		sum := events[len(events)-1]
		if r.Code != 0 || sum.Completed == nil || !*sum.Completed || sum.Order != "install" || sum.State != "Initializing" {
			t.Fatalf("exit %d, order %s, state %s; stderr:\n%s", r.Code, sum.Order, sum.State, head(r.Stderr, 20))
		}
		cv := record(t, dc)
		if diff := cmp.Diff([]string{v1.Previous + " Completed"}, history(t, cv)); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		if c := condition(cv, "Available"); c.Status != "True" || c.Message != "Done applying "+v1.Previous {
			t.Errorf("Available %+v", c)
		}
		if c := condition(cv, "Progressing"); c.Status != "False" || c.Message != "Cluster version is "+v1.Previous {
			t.Errorf("Progressing %+v", c)
		}
		for _, c := range cv.Status.Capabilities.EnabledCapabilities {
			if c == "Insights" {
				t.Error("Insights enabled at install")
			}
		}
		// Applied again: the release the cluster runs, reconciled; nothing
		// written, the record neither.
		again := parseEvents(t, cli(t, ctx, "apply", kc, "--payload", a, "-o", "json").Stdout)
		if sum := again[len(again)-1]; sum.State != "Reconciling" || sum.Order != "reconcile" || objectWrites(t, again) != 0 || *sum.RecordW != 0 {
			t.Errorf("re-apply: %+v, %d object writes", sum, objectWrites(t, again))
		}
	})

	var plan1 upgradePlan
	step("the plan to 4.22.1", func(t *testing.T) {
		before := record(t, dc).ResourceVersion
		var r result
		plan1, r = dryRun(t, kc, b1)
		if r.Code != 0 || plan1.Type != "z-stream" || plan1.Blocked {
			t.Fatalf("exit %d, %+v\n%s", r.Code, plan1, r.Stderr)
		}
		got := map[string][]string{"creates": objects(plan1.Creates), "deletes": objects(plan1.Deletes), "orphans": objects(plan1.Orphans), "moves": objects(plan1.Moves)}
		want := map[string][]string{
			"creates": {"CustomResourceDefinition/datagathers.insights.openshift.io", "CustomResourceDefinition/insightsdatagathers.config.openshift.io",
				"CustomResourceDefinition/widgets.upgrade.payload-apply.test", "Widget/sample"},
			"deletes": {"RoleBinding/openshift-dns-operator/dns-operator"},
			"orphans": {"NetworkPolicy/openshift-dns-operator/dns-operator-allow", "NetworkPolicy/openshift-dns-operator/dns-operator-deny-all"},
			"moves":   {"ClusterRoleBinding/system:openshift:operator:service-ca-operator"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("plan (-want +got):\n%s", diff)
		}
		changes := strings.Join(objects(plan1.Changes), " ")
		for _, w := range []string{"Deployment/openshift-dns-operator/dns-operator", "ClusterRole/openshift-dns-operator"} {
			if !strings.Contains(changes, w) {
				t.Errorf("changes lack %s: %s", w, changes)
			}
		}
		if len(plan1.Implicit) != 1 || plan1.Implicit[0].Capability != "Insights" {
			t.Errorf("implicitly enabled: %+v", plan1.Implicit)
		}
		if len(plan1.Kept) == 0 {
			t.Error("no ClusterOperator among the changes not written")
		}
		if record(t, dc).ResourceVersion != before {
			t.Error("a dry run wrote the record")
		}
	})

	step("preconditions", func(t *testing.T) {
		p.SetUpgradeable("kube-apiserver", "APIRemovedInNextRelease", "an API in use goes away in the next minor")
		defer p.SetUpgradeable("kube-apiserver", "", "")
		time.Sleep(500 * time.Millisecond)
		if pl, _ := dryRun(t, kc, b2); !pl.Blocked || strings.Join(pl.blockedBy(), ",") != "ClusterVersionUpgradeable APIRemovedInNextRelease" {
			t.Errorf("Upgradeable=False does not block the minor update: %+v", pl)
		}
		if pl, r := dryRun(t, kc, b1); pl.Blocked || r.Code != 0 {
			t.Errorf("Upgradeable=False blocks a z-stream update: exit %d %+v", r.Code, pl)
		}
		if pl, _ := dryRun(t, kc, b3); strings.Join(pl.blockedBy(), ",") != "ClusterVersionGiantHop MultipleMinorVersionsUpdate,ClusterVersionUpgradeable APIRemovedInNextRelease" &&
			strings.Join(pl.blockedBy(), ",") != "ClusterVersionUpgradeable APIRemovedInNextRelease,ClusterVersionGiantHop MultipleMinorVersionsUpdate" {
			t.Errorf("two minors at once: %v", pl.blockedBy())
		}
		if pl, r := dryRun(t, kc, b2, "--force"); pl.Blocked || r.Code != 0 || !pl.Preconditions[0].Forced {
			t.Errorf("--force does not pass: exit %d %+v", r.Code, pl)
		}
		// A real run that is blocked says so in the record, and changes
		// nothing else.
		before := record(t, dc)
		r := cli(t, ctx, "upgrade", kc, "--to", b2)
		after := record(t, dc)
		if c := condition(after, "ReleaseAccepted"); r.Code != 1 || c.Status != "False" || c.Reason != "PreconditionChecks" || !strings.Contains(c.Message, "APIRemovedInNextRelease") {
			t.Errorf("blocked run: exit %d, ReleaseAccepted %+v\n%s", r.Code, c, r.Stderr)
		}
		if diff := cmp.Diff(history(t, before), history(t, after)); diff != "" || after.Spec.DesiredUpdate != nil {
			t.Errorf("a blocked run changed the history or spec.desiredUpdate %+v:\n%s", after.Spec.DesiredUpdate, diff)
		}
	})

	step("an admin gate blocks until acknowledged", func(t *testing.T) {
		gate := "ack-4.22-upgrade-e2e"
		patch := func(ns, name, data string) {
			t.Helper()
			if _, err := dc.Resource(configMaps).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(data), metav1.PatchOptions{FieldManager: "e2e-admin"}); err != nil {
				t.Fatal(err)
			}
		}
		patch("openshift-config-managed", "admin-gates", fmt.Sprintf(`{"data":{%q:"Acknowledge that the e2e gate is understood."}}`, gate))
		pl, _ := dryRun(t, kc, b2)
		if strings.Join(pl.blockedBy(), ",") != "ClusterVersionUpgradeable AdminAckRequired" || !strings.Contains(pl.Preconditions[0].Message, "e2e gate") {
			t.Errorf("unacknowledged gate: %+v", pl.Preconditions)
		}
		patch("openshift-config", "admin-acks", fmt.Sprintf(`{"data":{%q:"true"}}`, gate))
		if pl, r := dryRun(t, kc, b2); pl.Blocked || r.Code != 0 {
			t.Errorf("acknowledged gate still blocks: %+v", pl.Preconditions)
		}
	})

	// The RoleBinding 4.22.1 deletes is held by a finalizer: the update
	// follows its deletion until it is gone.
	if _, err := dc.Resource(roleBindings).Namespace("openshift-dns-operator").Patch(ctx, "dns-operator", types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":["e2e.payload-apply.test/hold"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var first []event
	step("4.22.1, interrupted by SIGINT while it waits for an operator", func(t *testing.T) {
		p.Hold("dns", true)
		release(t, b1)
		run := startCLI(t, ctx, "upgrade", kc, "--to", b1, "-o", "json")
		run.Until(t, "it waits for ClusterOperator dns", func(e event) bool {
			return e.Event == "waiting" && e.Kind == "ClusterOperator" && e.Name == "dns" && e.Action == "Waiting"
		})
		// The record says what the update waits on.
		deadline := time.Now().Add(15 * time.Second)
		for {
			c := condition(record(t, dc), "Progressing")
			if strings.HasPrefix(c.Message, "Working towards 4.22.1: ") && strings.HasSuffix(c.Message, "waiting on dns") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Progressing never said it waits on dns: %+v", c)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err := run.Cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		code, events := run.Wait(t)
		first = events
		if code != 130 {
			t.Fatalf("exit %d, want 130; stderr:\n%s", code, run.Stderr.String())
		}
		cv := record(t, dc)
		if diff := cmp.Diff([]string{"4.22.1 Partial", v1.Previous + " Completed"}, history(t, cv)); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		if c := condition(cv, "Upgradeable"); c.Status != "False" {
			t.Errorf("Upgradeable during an update: %+v", c)
		}
		if d := cv.Spec.DesiredUpdate; d == nil || d.Version != "4.22.1" {
			t.Errorf("spec.desiredUpdate %+v", d)
		}
	})

	step("4.22.1 again: it continues, follows the delete, completes; nothing written twice", func(t *testing.T) {
		p.Hold("dns", false)
		run := startCLI(t, ctx, "upgrade", kc, "--to", b1, "-o", "json")
		var pl upgradePlan
		run.Until(t, "the plan", func(e event) bool {
			if e.Event != "plan" {
				return false
			}
			if err := json.Unmarshal(e.Plan, &pl); err != nil {
				t.Fatal(err)
			}
			return true
		})
		if !pl.Continuing {
			t.Errorf("not continuing: %+v", pl)
		}
		// The RoleBinding's finalizer holds the delete: the record says so.
		deadline := time.Now().Add(30 * time.Second)
		for {
			c := condition(record(t, dc), "Upgradeable")
			if c.Status == "False" && strings.Contains(c.Message, "ResourceDeletesInProgress") || c.Reason == "ResourceDeletesInProgress" {
				if !strings.Contains(c.Message, "rolebinding openshift-dns-operator/dns-operator") {
					t.Errorf("Upgradeable %+v", c)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Upgradeable never said a delete is in progress: %+v", c)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if _, err := dc.Resource(roleBindings).Namespace("openshift-dns-operator").Patch(ctx, "dns-operator", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		code, second := run.Wait(t)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, run.Stderr.String())
		}
		w1, w2 := written(first), written(second)
		for obj := range w2 {
			if _, twice := w1[obj]; twice {
				t.Errorf("%s written by both runs", obj)
			}
		}
		all := map[string]bool{}
		for obj := range w1 {
			all[obj] = true
		}
		for obj := range w2 {
			all[obj] = true
		}
		var want []string
		for _, items := range [][]planItem{plan1.Creates, plan1.Changes, plan1.Deletes} {
			want = append(want, objects(items)...)
		}
		var got []string
		for obj := range all {
			got = append(got, obj)
		}
		sort.Strings(want)
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("objects written (-the plan's creates, changes and deletes +written):\n%s", diff)
		}
		if n := objectWrites(t, second); n != int64(len(w2)) {
			t.Errorf("the second run made %d object writes for %d objects written", n, len(w2))
		}
		cv := record(t, dc)
		if diff := cmp.Diff([]string{"4.22.1 Completed", v1.Previous + " Completed"}, history(t, cv)); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		if c := condition(cv, "ImplicitlyEnabledCapabilities"); c.Status != "True" || !strings.HasSuffix(c.Message, ": Insights") {
			t.Errorf("ImplicitlyEnabledCapabilities %+v", c)
		}
		if c := condition(cv, "Upgradeable"); c.Status == "False" {
			t.Errorf("Upgradeable after the update: %+v", c)
		}
		// The cluster is the new release's render: no differences.
		if r := cli(t, ctx, "diff", kc, "--summary"); r.Code != 0 || !strings.Contains(r.Stderr, "comparing with the release the cluster runs: 4.22.1") {
			t.Errorf("diff after the update: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		checkObjects(t, dc)
	})

	var forced []event
	step("4.23.0, forced through Upgradeable=False; the API server restarts and the command crashes on the way", func(t *testing.T) {
		p.SetUpgradeable("kube-apiserver", "APIRemovedInNextRelease", "an API in use goes away in the next minor")
		defer p.SetUpgradeable("kube-apiserver", "", "")
		time.Sleep(500 * time.Millisecond)
		p.Hold("dns", true)
		release(t, b2)
		run := startCLI(t, ctx, "upgrade", kc, "--to", b2, "--force", "-o", "json")
		run.Until(t, "it waits for ClusterOperator dns", func(e event) bool {
			return e.Event == "waiting" && e.Kind == "ClusterOperator" && e.Name == "dns" && e.Action == "Waiting"
		})
		if err := s.Kill(apiserver.APIServer); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if err := s.Restart(ctx, apiserver.APIServer); err != nil {
			t.Fatal(err)
		}
		// The command rode the restart out and still waits: crash it.
		time.Sleep(time.Second)
		if err := run.Cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_, forced = run.Wait(t)
		if diff := cmp.Diff([]string{"4.23.0 Partial", "4.22.1 Completed", v1.Previous + " Completed"}, history(t, record(t, dc))); diff != "" {
			t.Errorf("history after the crash (-want +got):\n%s", diff)
		}
		p.Hold("dns", false)
		r := cli(t, ctx, "upgrade", kc, "--to", b2, "-o", "json")
		if r.Code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", r.Code, r.Stderr)
		}
		second := parseEvents(t, r.Stdout)
		w1, w2 := written(forced), written(second)
		for obj := range w2 {
			if _, twice := w1[obj]; twice {
				t.Errorf("%s written before the crash and again after", obj)
			}
		}
		cv := record(t, dc)
		if diff := cmp.Diff([]string{"4.23.0 Completed", "4.22.1 Completed", v1.Previous + " Completed"}, history(t, cv)); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		if risks := cv.Status.History[0].AcceptedRisks; !strings.HasPrefix(risks, "Forced through blocking failures: ") || !strings.Contains(risks, "APIRemovedInNextRelease") {
			t.Errorf("acceptedRisks %q", risks)
		}
		if v := cv.Status.History[0].Verified; v {
			t.Error("a local payload recorded as verified")
		}
	})

	step("a downgrade is refused; status reads the record", func(t *testing.T) {
		if pl, r := dryRun(t, kc, b1); r.Code != 1 || strings.Join(pl.blockedBy(), ",") != "ClusterVersionRollback LowDesiredVersion" {
			t.Errorf("rollback to 4.22.1: exit %d, %v", r.Code, pl.blockedBy())
		}
		r := cli(t, ctx, "status", kc)
		if r.Code != 0 || !strings.Contains(r.Stdout, "ClusterVersion version: desired 4.23.0") || !strings.Contains(r.Stderr, "comparing with the release the cluster runs: 4.23.0") {
			t.Errorf("status: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		// Run, not dry: blocked, and the record's line says what the
		// record still holds.
		r = cli(t, ctx, "upgrade", kc, "--to", b1)
		if r.Code != 1 || !strings.Contains(r.Stderr, "record: ClusterVersion version: 4.23.0 Completed (the update to 4.22.1 was not run)") {
			t.Errorf("blocked rollback: exit %d\n%s", r.Code, r.Stderr)
		}
	})
}

// checkObjects checks what 4.22.1 changed, object by object.
func checkObjects(t *testing.T, dc dynamic.Interface) {
	t.Helper()
	ctx := t.Context()
	v := variants[zStream]
	dep, err := dc.Resource(deployments).Namespace(v.Image.Namespace).Get(ctx, v.Image.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if img, _ := containers[0].(map[string]any)["image"].(string); img != v.NewImage {
		t.Errorf("deployment image %q, want %q", img, v.NewImage)
	}
	if _, err := dc.Resource(roleBindings).Namespace(v.Deleted.Namespace).Get(ctx, v.Deleted.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted RoleBinding: %v", err)
	}
	for _, o := range v.Orphans {
		if _, err := dc.Resource(networkPolicies).Namespace(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("orphan %s is gone: %v", o.Name, err)
		}
	}
	if _, err := dc.Resource(widgets).Get(ctx, v.CR.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the new custom resource: %v", err)
	}
	cr, err := dc.Resource(clusterRoles).Get(ctx, v.Implicit.Name, metav1.GetOptions{})
	if err != nil || cr.GetAnnotations()["capability.openshift.io/name"] != v.Capability {
		t.Errorf("the ClusterRole that joined %s: %v %v", v.Capability, cr.GetAnnotations(), err)
	}
}

// head returns the first n lines of s.
func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines[n] = "..."
	}
	return strings.Join(lines, "\n")
}

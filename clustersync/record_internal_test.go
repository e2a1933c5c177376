package clustersync

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/plancache"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

func planOf(version string) *plan.Plan {
	return &plan.Plan{Payload: &payload.Payload{Release: &payload.Release{Version: version}}}
}

func recordWith(h ...configv1.UpdateHistory) *configv1.ClusterVersion {
	return &configv1.ClusterVersion{Status: configv1.ClusterVersionStatus{History: h}}
}

func entry(version, image string, state configv1.UpdateState) configv1.UpdateHistory {
	return configv1.UpdateHistory{Version: version, Image: image, State: state}
}

// TestApplyMode: the CVO's state from the record decides the order of an
// apply; another version is an upgrade, refused.
func TestApplyMode(t *testing.T) {
	const a, b = "4.22.0", "4.22.1"
	for _, tc := range []struct {
		name  string
		rec   *configv1.ClusterVersion
		image string
		want  mode
		err   bool
	}{
		{name: "no record", want: mode{payload.OrderInstall, StateInitializing}},
		{name: "no history", rec: recordWith(), image: "x@sha256:1", want: mode{payload.OrderInstall, StateInitializing}},
		{name: "install not finished", rec: recordWith(entry(a, "x@sha256:1", configv1.PartialUpdate)), image: "x@sha256:1",
			want: mode{payload.OrderInstall, StateInitializing}},
		{name: "installed", rec: recordWith(entry(a, "x@sha256:1", configv1.CompletedUpdate)), image: "x@sha256:1",
			want: mode{payload.OrderReconcile, StateReconciling}},
		{name: "installed, no image given", rec: recordWith(entry(a, "x@sha256:1", configv1.CompletedUpdate)),
			want: mode{payload.OrderReconcile, StateReconciling}},
		{name: "update that stopped", rec: recordWith(entry(a, "y@sha256:2", configv1.PartialUpdate), entry("4.21.3", "x@sha256:1", configv1.CompletedUpdate)),
			image: "y@sha256:2", want: mode{payload.OrderUpdate, StateUpdating}},
		{name: "same version, another image", rec: recordWith(entry(a, "x@sha256:1", configv1.CompletedUpdate)), image: "z@sha256:3",
			want: mode{payload.OrderUpdate, StateUpdating}},
		{name: "another version", rec: recordWith(entry(b, "x@sha256:1", configv1.CompletedUpdate)), image: "x@sha256:1", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := applyMode(tc.rec, planOf(a), Release{Image: tc.image})
			var me *ReleaseMismatchError
			if tc.err {
				if !errors.As(err, &me) || !strings.Contains(err.Error(), "is an upgrade") {
					t.Fatalf("want a ReleaseMismatchError, got %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestFromImage: the release an upgrade leaves is the one the record
// works towards, or the one before when the upgrade to the same image
// stopped.
func TestFromImage(t *testing.T) {
	cv := recordWith(entry("4.22.1", "b", configv1.PartialUpdate), entry("4.22.0", "a", configv1.CompletedUpdate))
	cv.Status.Desired.Image = "b"
	for _, tc := range []struct {
		rec      *configv1.ClusterVersion
		to, want string
	}{
		{nil, "b", ""},
		{cv, "b", "a"},
		{cv, "c", "b"},
		{recordWith(entry("4.22.0", "a", configv1.PartialUpdate)), "a", "a"},
		{recordWith(entry("4.22.0", "a", configv1.CompletedUpdate)), "b", "a"},
		{recordWith(), "b", ""},
	} {
		if got := FromImage(tc.rec, tc.to); got != tc.want {
			t.Errorf("FromImage(%v, %q) = %q, want %q", tc.rec != nil, tc.to, got, tc.want)
		}
	}
}

// TestFailureOf: one error keeps its reason, named as the CVO names its
// task errors; several are MultipleErrors, at most ten listed.
func TestFailureOf(t *testing.T) {
	if failureOf(nil) != nil {
		t.Error("no errors, a failure")
	}
	co := manifest.ID{Group: "config.openshift.io", Kind: "ClusterOperator", Name: "dns"}
	cm := manifest.ID{Kind: "ConfigMap", Namespace: "ns", Name: "c"}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&resourceapply.ApplyError{Object: co, Verb: "wait", Reason: resourceapply.ReasonTimeout, Err: errors.New("Available=False (Down)")}, "ClusterOperatorNotAvailable"},
		{&resourceapply.ApplyError{Object: co, Verb: "wait", Reason: resourceapply.ReasonTimeout, Err: errors.New("Degraded=True (Broken)")}, "ClusterOperatorDegraded"},
		{&resourceapply.ApplyError{Object: co, Verb: "wait", Reason: resourceapply.ReasonTimeout, Err: errors.New("version operator is 4.22.0, not 4.22.1")}, "ClusterOperatorUpdating"},
		{&resourceapply.ApplyError{Object: cm, Verb: "apply", Reason: resourceapply.ReasonResourceTypeMissing, Err: errors.New("no kind")}, "UpdatePayloadResourceTypeMissing"},
		{&resourceapply.ApplyError{Object: cm, Verb: "apply", Reason: resourceapply.ReasonForbidden, Err: errors.New("no")}, "UpdatePayloadResourceForbidden"},
		{&resourceapply.ApplyError{Object: cm, Verb: "apply", Reason: resourceapply.ReasonInvalid, Err: errors.New("bad")}, "UpdatePayloadResourceInvalid"},
		{fmt.Errorf("wrapped: %w", &PreconditionError{}), "UpgradePreconditionCheckFailed"},
		{errors.New("something"), "UpdatePayloadFailed"},
	} {
		f := failureOf([]error{tc.err})
		if f.Reason != tc.want || f.Message != tc.err.Error() {
			t.Errorf("%v: %+v, want reason %s", tc.err, f, tc.want)
		}
	}
	var errs []error
	for i := 0; i < 12; i++ {
		errs = append(errs, fmt.Errorf("error %d", i))
	}
	f := failureOf(errs)
	if f.Reason != "MultipleErrors" || !strings.HasPrefix(f.Message, "Multiple errors are preventing progress:\n* error 0\n") ||
		!strings.HasSuffix(f.Message, "* error 9\n* ... and 2 more") {
		t.Errorf("%+v", f)
	}
}

// TestReleaseRisk: an unverified payload adds an accepted risk; a verified
// one, or one not checked, none.
func TestReleaseRisk(t *testing.T) {
	if r := (Release{Image: "x"}).risk("4.22.1"); r != "" {
		t.Errorf("not checked: %q", r)
	}
	if r := (Release{Image: "x", Verification: &Verification{Verified: true}}).risk("4.22.1"); r != "" {
		t.Errorf("verified: %q", r)
	}
	r := Release{Image: "x@sha256:1", Verification: &Verification{Reason: "no signature found"}}
	if got := r.risk("4.22.1"); got != "The release 4.22.1 (x@sha256:1) cannot be verified, and was applied anyway: no signature found" || r.verified() {
		t.Errorf("%q", got)
	}
	if got := joinRisks("", "a", "", "b"); got != "a\nb" {
		t.Errorf("joinRisks: %q", got)
	}
	r.AcceptedRisks = []string{"The update to 4.22.1 is exposed to the risks A, which the cluster's administrators accepted."}
	if got := joinRisks(r.risks("4.22.1")...); got != "The release 4.22.1 (x@sha256:1) cannot be verified, and was applied anyway: no signature found\n"+r.AcceptedRisks[0] {
		t.Errorf("with accepted risks: %q", got)
	}
}

// TestCapabilitiesOf: enabled capabilities stay enabled, the plan's
// objects' capabilities are enabled, and those the spec does not ask for
// are implicitly enabled.
func TestCapabilitiesOf(t *testing.T) {
	none := configv1.ClusterVersionCapabilitySetNone
	cv := &configv1.ClusterVersion{
		Spec: configv1.ClusterVersionSpec{Capabilities: &configv1.ClusterVersionCapabilitiesSpec{BaselineCapabilitySet: none,
			AdditionalEnabledCapabilities: []configv1.ClusterVersionCapability{"Ingress"}}},
		Status: configv1.ClusterVersionStatus{Capabilities: configv1.ClusterVersionCapabilitiesStatus{
			EnabledCapabilities: []configv1.ClusterVersionCapability{"Ingress", "Console"}}},
	}
	ms, err := manifest.Parse("0000_50_insights.yaml", []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: x
  namespace: insights
  annotations:
    capability.openshift.io/name: Insights
`), manifest.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{}
	for i := range ms {
		p.Objects = append(p.Objects, &ms[i])
	}
	c := capabilitiesOf(cv, nil, p)
	got := fmt.Sprint(c.Enabled, c.ImplicitlyEnabled)
	if got != "[Console Ingress Insights] [Console Insights]" {
		t.Errorf("enabled, implicit: %s", got)
	}
}

// TestEmbeddedRecordCRD: a payload without the CVO's manifests still gets
// the real ClusterVersion CRD for its record, the built-in payload's.
func TestEmbeddedRecordCRD(t *testing.T) {
	crd, err := embeddedRecordCRD()
	if err != nil {
		t.Fatal(err)
	}
	if got := crd.Obj.GetName(); got != recordCRDName {
		t.Errorf("name %q, want %q", got, recordCRDName)
	}
	if crd.Obj.GetAPIVersion() != "apiextensions.k8s.io/v1" {
		t.Errorf("apiVersion %q", crd.Obj.GetAPIVersion())
	}
}

// TestRecordCRDLean: a payload loaded for one selection only keeps the
// metadata of the CRDs it excludes; the record's CRD is never such a husk.
func TestRecordCRDLean(t *testing.T) {
	fsys := os.DirFS(realpayload.Dir(t))
	for _, profile := range []string{"self-managed-high-availability", "hypershift", "single-node-developer"} {
		t.Run(profile, func(t *testing.T) {
			p, err := plan.Build(t.Context(), plan.Options{Payload: fsys, Profile: profile, Lean: true})
			if err != nil {
				t.Fatal(err)
			}
			if crd := recordCRD(p); crd != nil {
				if _, ok, _ := unstructured.NestedSlice(crd.Obj.Object, "spec", "versions"); !ok {
					t.Errorf("%s: the record's CRD has no spec.versions: %v", crd.Position(), crd.Obj.Object)
				}
			}
			// As Start loads it: the payload's own CRD, whole, parsed and
			// from the plan cache.
			store := &plancache.Store{Dir: t.TempDir()}
			for _, warm := range []bool{false, true} {
				p, err := plan.Build(t.Context(), plan.Options{Payload: fsys, Profile: profile, Lean: true, KeepWhole: isRecordCRD, PlanCache: store})
				if err != nil {
					t.Fatal(err)
				}
				if warm != p.PlanCache.Hit {
					t.Fatalf("plan cache hit %v, want %v", p.PlanCache.Hit, warm)
				}
				crd := recordCRD(p)
				if crd == nil {
					t.Fatalf("warm %v: no ClusterVersion CRD whole in a lean load keeping it whole", warm)
				}
				if _, ok, _ := unstructured.NestedSlice(crd.Obj.Object, "spec", "versions"); !ok {
					t.Errorf("warm %v: %s: the record's CRD has no spec.versions", warm, crd.Position())
				}
			}
		})
	}
}

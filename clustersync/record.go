package clustersync

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/lib/clusterversion"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

// RecordName is the name of the cluster's record, the config.openshift.io/v1
// ClusterVersion the CVO keeps.
const RecordName = "version"

var (
	clusterVersionGVK = configv1.GroupVersion.WithKind("ClusterVersion")
	clusterVersionGVR = schema.GroupVersionResource{Group: configv1.GroupName, Version: "v1", Resource: "clusterversions"}
	// recordCRDName is the CustomResourceDefinition of ClusterVersion.
	recordCRDName = "clusterversions.config.openshift.io"
)

// ReadRecord returns the cluster's record, ClusterVersion "version", or nil
// when the cluster has none or does not serve the kind.
func ReadRecord(ctx context.Context, c *Cluster) (*configv1.ClusterVersion, error) {
	cv, _, err := readRecord(ctx, c)
	return cv, err
}

// readRecord also says whether the cluster serves ClusterVersion.
func readRecord(ctx context.Context, c *Cluster) (cv *configv1.ClusterVersion, served bool, err error) {
	u, err := c.Manager.Get(ctx, clusterVersionGVK, "", RecordName, c.RetryOptions())
	switch {
	case resourceapply.IsResourceTypeMissing(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading the cluster's record: %w", err)
	case u == nil:
		return nil, true, nil
	}
	cv, err = toClusterVersion(u)
	return cv, true, err
}

func toClusterVersion(u *unstructured.Unstructured) (*configv1.ClusterVersion, error) {
	cv := &configv1.ClusterVersion{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cv); err != nil {
		return nil, fmt.Errorf("ClusterVersion %s: %w", u.GetName(), err)
	}
	return cv, nil
}

func fromClusterVersion(cv *configv1.ClusterVersion) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cv)
	if err != nil {
		return nil, err
	}
	// Spec fields the Go type has but the CustomResourceDefinition may not
	// (feature-gated ones) are null when unset: leave them out. (The
	// status's nulls stay: completionTime and availableUpdates are
	// required, nullable.)
	dropNulls(obj["spec"])
	dropNulls(obj["metadata"])
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(clusterVersionGVK)
	return u, nil
}

// dropNulls removes the null values of maps, recursively.
func dropNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == nil {
				delete(v, k)
				continue
			}
			dropNulls(x)
		}
	case []any:
		for _, x := range v {
			dropNulls(x)
		}
	}
}

// Release says how the record names the payload an apply or upgrade
// applies, and what was accepted to apply it.
type Release struct {
	// Image names the payload in the record (status.desired.image and
	// the history entry's image), e.g. a registry pull spec by digest, or
	// a path and content digest for a payload on disk. Empty: the record
	// gets no history entry (the CVO keeps none without an image).
	Image string
	// Verification is how the payload's signatures were checked; nil:
	// not checked (the history entry says verified: false and accepts no
	// risk for it).
	Verification *Verification
	// AcceptedRisks are risks accepted to choose the release (a
	// conditional update's risks its administrators accepted): the
	// history entry records them with the others.
	AcceptedRisks []string
}

// Verification is the outcome of checking a payload's signatures against
// a policy (the signature verification of issue 18 gives it).
type Verification struct {
	// Verified: a signature the policy trusts covers the payload's digest.
	Verified bool
	// Reason says why the payload is not verified when Verified is false
	// ("no signature found", "unverified payloads allowed"); the history
	// entry records it as an accepted risk.
	Reason string
}

// risk returns the accepted risk an unverified payload adds, or "".
func (r Release) risk(version string) string {
	v := r.Verification
	if v == nil || v.Verified {
		return ""
	}
	reason := v.Reason
	if reason == "" {
		reason = "its signatures were not verified"
	}
	return fmt.Sprintf("The release %s (%s) cannot be verified, and was applied anyway: %s", version, r.Image, reason)
}

// risks returns the accepted risks of choosing the release: an
// unverified payload's, then AcceptedRisks.
func (r Release) risks(version string) []string {
	return append([]string{r.risk(version)}, r.AcceptedRisks...)
}

func (r Release) verified() bool { return r.Verification != nil && r.Verification.Verified }

// joinRisks joins accepted risks with a newline, as the CVO does.
func joinRisks(risks ...string) string {
	out := ""
	for _, r := range risks {
		switch {
		case r == "":
		case out == "":
			out = r
		default:
			out += "\n" + r
		}
	}
	return out
}

// recordWriter writes the record's status as a sync goes: it holds the
// record as last read or written and writes only when the status changes.
// It is safe for concurrent use.
type recordWriter struct {
	ri dynamic.ResourceInterface
	// retry bounds the retries of a write: the Cluster's (openRecord),
	// then the run's retry window (ApplyOptions.RetryTimeout).
	retry resourceapply.RetryOptions

	mu     sync.Mutex
	cv     *configv1.ClusterVersion
	writes int
}

// openRecord returns a writer of the cluster's record, making the record
// first when the cluster has none: the ClusterVersion
// CustomResourceDefinition (the plan's, else the payload's for the feature
// set, whatever the profile: the installer makes the record on every
// cluster) and the object, with a new cluster ID and caps as
// spec.capabilities.
func openRecord(ctx context.Context, c *Cluster, p *plan.Plan, caps *configv1.ClusterVersionCapabilitiesSpec) (*recordWriter, error) {
	dc, err := c.dynamic()
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	w := &recordWriter{ri: dc.Resource(clusterVersionGVR), retry: c.RetryOptions()}
	cv, served, err := readRecord(ctx, c)
	if err != nil {
		return nil, err
	}
	if !served {
		crd := recordCRD(p)
		if crd == nil {
			// A payload without the CVO's manifests (a few objects of
			// one's own): the record is still the real ClusterVersion,
			// with the CRD the binary's reference payload carries.
			if crd, err = embeddedRecordCRD(); err != nil {
				return nil, err
			}
		}
		if _, err := c.Manager.Apply(ctx, crd.Obj, resourceapply.DefaultApplyOptions()); err != nil {
			return nil, fmt.Errorf("the record: %s: %w", crd.Position(), err)
		}
	}
	if cv == nil {
		spec := map[string]any{"clusterID": string(uuid.NewUUID())}
		if caps != nil {
			c := map[string]any{"baselineCapabilitySet": string(caps.BaselineCapabilitySet)}
			if len(caps.AdditionalEnabledCapabilities) > 0 {
				add := make([]any, len(caps.AdditionalEnabledCapabilities))
				for i, a := range caps.AdditionalEnabledCapabilities {
					add[i] = string(a)
				}
				c["additionalEnabledCapabilities"] = add
			}
			spec["capabilities"] = c
		}
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": clusterVersionGVK.GroupVersion().String(), "kind": clusterVersionGVK.Kind,
			"metadata": map[string]any{"name": RecordName}, "spec": spec}}
		var out *unstructured.Unstructured
		// Created by server-side apply: kube-apiserver holds a POST of a
		// custom resource whose CRD was established less than 2 s ago.
		err = resourceapply.Retry(ctx, w.retry, func() error {
			var err error
			if out, err = w.ri.Get(ctx, RecordName, metav1.GetOptions{}); err == nil {
				// Made meanwhile: keep it.
				return nil
			} else if !apierrors.IsNotFound(err) {
				return err
			}
			out, err = w.ri.Apply(ctx, RecordName, u, metav1.ApplyOptions{FieldManager: resourceapply.DefaultFieldManager})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("creating the record (ClusterVersion %s): %w", RecordName, err)
		}
		if cv, err = toClusterVersion(out); err != nil {
			return nil, err
		}
	}
	w.cv = cv
	return w, nil
}

// recordCRD returns the ClusterVersion CustomResourceDefinition of the plan,
// else the payload's variant for the plan's feature set (the Default one
// when none names it), else nil. A payload loaded for one selection only
// (plan.Options.Lean) keeps just the metadata of what it excludes, unless
// told to keep it whole (Start keeps the record's CRD whole,
// isRecordCRD): a CRD without spec is passed over.
func recordCRD(p *plan.Plan) *manifest.Manifest {
	isCRD := func(m *manifest.Manifest) bool {
		if !isRecordCRD(m) || m.IsDelete() {
			return false
		}
		_, whole := m.Obj.Object["spec"]
		return whole
	}
	if p == nil {
		return nil
	}
	for _, m := range p.Objects {
		if isCRD(m) {
			return m
		}
	}
	if p.Payload == nil || p.Selector == nil {
		return nil
	}
	sel := *p.Selector
	sel.Profiles, sel.Capabilities = nil, nil
	var fallback *manifest.Manifest
	for _, m := range p.Payload.Manifests() {
		if !isCRD(m) {
			continue
		}
		if sel.Include(m).Included {
			return m
		}
		if fallback == nil || m.Obj.GetAnnotations()[manifest.FeatureSetAnnotation] == "Default" {
			fallback = m
		}
	}
	return fallback
}

// isRecordCRD reports whether m is a variant of the ClusterVersion
// CustomResourceDefinition (the record's kind). Start keeps them whole in
// a lean load (plan.Options.KeepWhole).
func isRecordCRD(m *manifest.Manifest) bool {
	return m.GVK.Group == "apiextensions.k8s.io" && m.GVK.Kind == "CustomResourceDefinition" && m.Obj.GetName() == recordCRDName
}

// embeddedRecordFile is the ClusterVersion CRD of the reference payload
// compiled into the binary (openshift/api's, as real payloads carry it).
const embeddedRecordFile = "manifests/0000_00_cluster-version-operator_01_clusterversions.crd.yaml"

// embeddedRecordCRD returns the reference payload's ClusterVersion
// CustomResourceDefinition.
func embeddedRecordCRD() (*manifest.Manifest, error) {
	data, err := fs.ReadFile(payload.Embedded(), embeddedRecordFile)
	if err != nil {
		return nil, fmt.Errorf("the record: the built-in ClusterVersion CRD: %w", err)
	}
	ms, err := manifest.Parse("(built-in) "+embeddedRecordFile, data, manifest.ParseOptions{})
	if err != nil {
		return nil, fmt.Errorf("the record: the built-in ClusterVersion CRD: %w", err)
	}
	for i := range ms {
		if ms[i].GVK.Kind == "CustomResourceDefinition" && ms[i].Obj.GetName() == recordCRDName {
			return &ms[i], nil
		}
	}
	return nil, errors.New("the record: the built-in payload has no ClusterVersion CRD")
}

// record returns the record as last read or written.
func (w *recordWriter) record() *configv1.ClusterVersion {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cv.DeepCopy()
}

// count returns how many writes of the record were made (its status,
// its spec.desiredUpdate).
func (w *recordWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes
}

// sync writes the status that p makes of the record's (see
// clusterversion.Update; p.Generation is the record's), through the status
// subresource, when it differs. A conflict reads the record again and
// computes the status anew.
func (w *recordWriter) sync(ctx context.Context, p clusterversion.Progress) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := resourceapply.Retry(ctx, w.retry, func() error {
		next := w.cv.DeepCopy()
		p.Generation = next.Generation
		clusterversion.Update(&next.Status, p, metav1.NewTime(time.Now().Truncate(time.Second)))
		if equality.Semantic.DeepEqual(next.Status, w.cv.Status) {
			return nil
		}
		return w.writeStatus(ctx, next)
	})
	if err != nil {
		return fmt.Errorf("writing the record's status (ClusterVersion %s): %w", RecordName, err)
	}
	return nil
}

// setCondition sets one condition of the record's status (see
// clusterversion.SetCondition), writing it when it changes.
func (w *recordWriter) setCondition(ctx context.Context, c configv1.ClusterOperatorStatusCondition, now time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := resourceapply.Retry(ctx, w.retry, func() error {
		next := w.cv.DeepCopy()
		clusterversion.SetCondition(&next.Status.Conditions, c, metav1.NewTime(now.Truncate(time.Second)))
		if equality.Semantic.DeepEqual(next.Status, w.cv.Status) {
			return nil
		}
		return w.writeStatus(ctx, next)
	})
	if err != nil {
		return fmt.Errorf("writing the record's status (ClusterVersion %s): %w", RecordName, err)
	}
	return nil
}

// writeStatus writes next's status (w.mu held); on a conflict it reads
// the record again and returns the conflict, for the caller to retry.
func (w *recordWriter) writeStatus(ctx context.Context, next *configv1.ClusterVersion) error {
	u, err := fromClusterVersion(next)
	if err != nil {
		return err
	}
	out, err := w.ri.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: resourceapply.DefaultFieldManager})
	if apierrors.IsConflict(err) {
		if live, gerr := w.ri.Get(ctx, RecordName, metav1.GetOptions{}); gerr == nil {
			if cv, cerr := toClusterVersion(live); cerr == nil {
				w.cv = cv
			}
		}
		return err
	}
	if err != nil {
		return err
	}
	w.writes++
	cv, err := toClusterVersion(out)
	if err != nil {
		return err
	}
	w.cv = cv
	return nil
}

// setDesiredUpdate sets the record's spec.desiredUpdate to u, as `oc adm
// upgrade` asks the CVO for an update, unless it says so already.
func (w *recordWriter) setDesiredUpdate(ctx context.Context, u configv1.Update) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if d := w.cv.Spec.DesiredUpdate; d != nil && d.Version == u.Version && d.Image == u.Image && d.Force == u.Force {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"desiredUpdate": map[string]any{"version": u.Version, "image": u.Image, "force": u.Force}}})
	if err != nil {
		return err
	}
	var out *unstructured.Unstructured
	err = resourceapply.Retry(ctx, w.retry, func() error {
		var err error
		out, err = w.ri.Patch(ctx, RecordName, "application/merge-patch+json", patch, metav1.PatchOptions{FieldManager: resourceapply.DefaultFieldManager})
		return err
	})
	if err != nil {
		return fmt.Errorf("setting the record's spec.desiredUpdate: %w", err)
	}
	w.writes++
	cv, err := toClusterVersion(out)
	if err != nil {
		return err
	}
	w.cv = cv
	return nil
}

// versionHash fingerprints the objects of a plan, as the CVO's
// status.versionHash fingerprints its manifests: FNV-64 of their JSON, in
// apply order, base64 (URL encoding).
func versionHash(p *plan.Plan) string {
	d := p.Digests()
	return base64.URLEncoding.EncodeToString(d.FNV64[:])
}

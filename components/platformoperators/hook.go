package platformoperators

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// TechPreviewNoUpgrade is the feature set the manager ships in.
const TechPreviewNoUpgrade = "TechPreviewNoUpgrade"

// Where the hook places its step and the BundleDeployments' preview.
// Without PlatformOperators the step runs at StepFile: in the manager's
// component at run level 50, after its CRDs, service account, RBAC,
// Deployment (00-06) and ClusterOperators (07), so that its first run
// writes their status. With PlatformOperators it runs right after the
// last file that holds one (PlatformOperatorsStepFile): the admin's
// extra manifests run after the payload, and the step must see them to
// create their BundleDeployments. The apply engine waits on ClusterOperators
// only at the end (apply --wait), running the step again before every poll.
// Render shows the preview at PreviewFile.
const (
	StepFile    = component.GeneratedDir + "/0000_50_cluster-platform-operators-manager_08-platformoperators.step"
	PreviewFile = "0000_50_cluster-platform-operators-manager_06-platformoperators-bundledeployments.yaml"
)

// PlatformOperatorsStepFile is where the step runs when PlatformOperators
// are given: named after the base name (without extension) of the last of
// their files in name order, so that it sorts after every one of them
// ("platformoperators.yaml" gives
// "generated/platformoperators_platformoperators.step").
func PlatformOperatorsStepFile(files []string) string {
	last := ""
	for _, f := range files {
		if b := path.Base(f); b > last {
			last = b
		}
	}
	return component.GeneratedDir + "/" + strings.TrimSuffix(last, path.Ext(last)) + "_platformoperators.step"
}

// Hook is the render hook of the platform operators manager. It is active
// when the feature set is TechPreviewNoUpgrade and the manager is in the
// plan (its PlatformOperator CRD is among the included objects). Then it
//   - checks every PlatformOperator among the extra manifests (they stay in
//     the plan as the admin wrote them): DecodePlatformOperator, and a name
//     short enough for the shape's BundleDeployment (Shape.ValidateName);
//     errors name FILE#DOC, the object and the field;
//   - checks that the plan's BundleDeployment CRD, when it has one, serves
//     the shape's version (an error naming the CRD's file otherwise); with
//     no such CRD in the plan, warns that the cluster must serve it;
//   - reads the catalog (Catalog); with PlatformOperators
//     and no catalog the plan fails: there would be nothing to install them
//     from, and the apply could never finish;
//   - picks each package's bundle for the release version and previews the
//     BundleDeployments the step will create (render shows them, without
//     the owner reference's uid); a package that cannot be sourced, or that
//     an earlier PlatformOperator (file order) already names, is a warning:
//     at apply time that PlatformOperator reports SourceFailed or
//     InstallFailed;
//   - returns the Step, even with no PlatformOperators (it keeps the
//     aggregate ClusterOperator Available, which the apply waits on): after
//     the manager's namespace and CRDs, and after its ClusterOperators at
//     StepFile, or after the PlatformOperators at PlatformOperatorsStepFile.
//
// When the hook is not active, PlatformOperators among the extra manifests
// are errors (their CRD is not in the plan).
type Hook struct {
	// Catalog is the file-based operator catalog (--catalog) the bundles
	// come from; nil: none.
	Catalog fs.FS
	// Shape is the BundleDeployments' API version
	// (--bundle-deployment-shape); "" is ShapeV1Alpha2.
	Shape Shape
}

var _ component.Hook = Hook{}

// Name returns "platformoperators".
func (Hook) Name() string { return "platformoperators" }

// Render implements component.Hook.
func (h Hook) Render(ctx context.Context, in *component.Input) (*component.Output, error) {
	type found struct {
		m  *manifest.Manifest
		po *PlatformOperator
	}
	var pos []found
	var errs []error
	for _, m := range in.Extra {
		if m.GVK.Group != Group || m.GVK.Kind != Kind {
			continue
		}
		po, err := DecodePlatformOperator(m.Obj.Object)
		if err != nil {
			errs = append(errs, objectErrors(m, err)...)
			continue
		}
		pos = append(pos, found{m, po})
	}

	var crds, cos []manifest.ID
	var bdCRD *manifest.Manifest
	hasCRD := false
	for _, m := range in.Objects {
		id := m.ID()
		switch {
		case id.Group == "" && id.Kind == "Namespace" && id.Name == Namespace:
			crds = append(crds, id)
		case id.Group == "apiextensions.k8s.io" && id.Kind == "CustomResourceDefinition" && id.Name == BundleDeploymentCRD:
			crds = append(crds, id)
			bdCRD = m
		case id.Group == "apiextensions.k8s.io" && id.Kind == "CustomResourceDefinition" && id.Name == PlatformOperatorCRD:
			crds = append(crds, id)
			hasCRD = true
		case id.Group == "config.openshift.io" && id.Kind == "ClusterOperator" && (id.Name == AggregateClusterOperator || id.Name == CoreClusterOperator):
			cos = append(cos, id)
		}
	}
	if in.FeatureSet != TechPreviewNoUpgrade || !hasCRD {
		for _, f := range pos {
			errs = append(errs, fmt.Errorf("%s: %s: platform operators need the %s feature set and the platform operators manager in the plan (feature set %s, manager %s)",
				f.m.Position(), f.m.ID(), TechPreviewNoUpgrade, in.FeatureSet, inPlan(hasCRD)))
		}
		return nil, errors.Join(errs...)
	}

	shape, err := ParseShape(string(h.Shape))
	if err != nil {
		errs = append(errs, err)
	} else {
		if bdCRD != nil {
			if served := servedVersions(bdCRD); !slices.Contains(served, string(shape)) {
				errs = append(errs, fmt.Errorf("%s: %s: serves %s, not %s: the BundleDeployment shape must be a version the payload's rukpak serves (--bundle-deployment-shape)",
					bdCRD.Position(), bdCRD.ID(), strings.Join(served, ", "), shape))
			}
		}
		for _, f := range pos {
			if err := shape.ValidateName(f.po.Name); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", f.m.Position(), f.m.ID(), err))
			}
		}
	}
	var cat *Catalog
	if h.Catalog != nil {
		if cat, err = LoadCatalog(h.Catalog); err != nil {
			errs = append(errs, fmt.Errorf("catalog: %w", err))
		}
	} else {
		for _, f := range pos {
			errs = append(errs, fmt.Errorf("%s: %s: spec.package.name %q: no catalog to source it from (give --catalog DIR)",
				f.m.Position(), f.m.ID(), f.po.Spec.Package.Name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	out := &component.Output{}
	if bdCRD == nil && len(pos) > 0 {
		f := pos[0]
		out.Findings = append(out.Findings, manifest.Finding{File: f.m.File, Doc: f.m.Doc, Severity: manifest.SeverityWarning,
			Message: fmt.Sprintf("%s: the plan has no CRD %s: the cluster must serve %s %s (rukpak) or every PlatformOperator reports Installed=False %s",
				f.m.ID(), BundleDeploymentCRD, BundleDeploymentKind, shape.GroupVersionKind().GroupVersion(), ReasonInstallFailed)})
	}
	var previews []*manifest.Manifest
	claimed := map[string]found{}
	for _, f := range pos {
		warn := func(format string, args ...any) {
			out.Findings = append(out.Findings, manifest.Finding{File: f.m.File, Doc: f.m.Doc, Severity: manifest.SeverityWarning,
				Message: f.m.ID().String() + ": " + fmt.Sprintf(format, args...)})
		}
		pkg := f.po.Spec.Package.Name
		if first, ok := claimed[pkg]; ok {
			warn("package %q is also named by %s (%s): only the PlatformOperator created first installs it; if that is %s, this one reports Installed=False %s",
				pkg, first.m.ID(), first.m.Position(), first.po.Name, ReasonInstallFailed)
			continue
		}
		claimed[pkg] = f
		sel, err := cat.Select(pkg, in.ReleaseVersion)
		if err != nil {
			warn("%v: it will report Installed=False %s", err, ReasonSourceFailed)
			continue
		}
		for _, r := range sel.Rejected {
			// A bundle passed over because its own declaration cannot be
			// read (a version that is not semver) may be the one meant:
			// name it. Bundles the rules filter out are the catalog's way.
			if !r.Malformed {
				continue
			}
			warn("package %q: bundle %s (%s) passed over: %s; installing %s (%s)", pkg, r.Bundle, r.Source, strings.Join(r.Reasons, "; "), sel.Bundle.Name, sel.Version)
		}
		m, err := component.Generated(PreviewFile, len(previews), BundleDeployment(f.po, sel.Bundle, shape))
		if err != nil {
			return nil, err
		}
		previews = append(previews, m)
	}
	// After the ClusterOperators too, so that the first run writes them;
	// or after the PlatformOperators, which come later.
	file, after := StepFile, append(slices.Clone(crds), cos...)
	if len(pos) > 0 {
		files := make([]string, len(pos))
		after = slices.Clone(crds)
		for i, f := range pos {
			files[i] = f.m.OriginalFilename
			after = append(after, f.m.ID())
		}
		file = PlatformOperatorsStepFile(files)
	}
	out.Steps = []component.StepSpec{{
		Step:    &Step{Catalog: cat, ReleaseVersion: in.ReleaseVersion, Shape: shape},
		File:    file,
		After:   after,
		Preview: previews,
	}}
	return out, nil
}

// objectErrors prefixes each of err's joined errors with the manifest's
// position and identity.
func objectErrors(m *manifest.Manifest, err error) []error {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	out := make([]error, len(list))
	for i, e := range list {
		out[i] = fmt.Errorf("%s: %s: %w", m.Position(), m.ID(), e)
	}
	return out
}

func inPlan(b bool) string {
	if b {
		return "in the plan"
	}
	return "not in the plan"
}

// servedVersions returns the versions a CustomResourceDefinition manifest
// serves, in its order.
func servedVersions(m *manifest.Manifest) []string {
	versions, _, _ := unstructured.NestedSlice(m.Obj.Object, "spec", "versions")
	var out []string
	for _, v := range versions {
		if v, ok := v.(map[string]any); ok && v["served"] == true {
			if name, ok := v["name"].(string); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

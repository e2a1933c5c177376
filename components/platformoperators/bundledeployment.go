package platformoperators

import (
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Shape is the BundleDeployment API version the component writes.
type Shape string

// The shapes.
const (
	// ShapeV1Alpha2 is rukpak's v1alpha2 BundleDeployment (rukpak v0.17.0,
	// what openshift/platform-operators main writes): provisioner class
	// core-rukpak-io-registry and the bundle image as its source. The
	// default.
	ShapeV1Alpha2 Shape = "v1alpha2"
	// ShapeV1Alpha1 is rukpak's v1alpha1 BundleDeployment (rukpak v0.9.0,
	// what OpenShift 4.12 shipped): the plain provisioner applies a Bundle
	// template that the registry provisioner unpacks from the bundle image.
	ShapeV1Alpha1 Shape = "v1alpha1"
)

// Provisioner class names. rukpak's CRDs only accept class names matching
// ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$, so the IDs the enhancement wrote as
// core.rukpak.io/plain and core.rukpak.io/registry shipped with dashes.
const (
	// RegistryProvisioner unpacks registry+v1 bundles: the class of a
	// v1alpha2 BundleDeployment and of a v1alpha1 Bundle template.
	RegistryProvisioner = "core-rukpak-io-registry"
	// PlainProvisioner applies unpacked bundles: the class of a v1alpha1
	// BundleDeployment.
	PlainProvisioner = "core-rukpak-io-plain"
)

// ParseShape reads a shape (--bundle-deployment-shape): "v1alpha2" or "" (the default) or
// "v1alpha1".
func ParseShape(s string) (Shape, error) {
	switch Shape(s) {
	case "", ShapeV1Alpha2:
		return ShapeV1Alpha2, nil
	case ShapeV1Alpha1:
		return ShapeV1Alpha1, nil
	}
	return "", fmt.Errorf("bundle deployment shape %q: want %s or %s", s, ShapeV1Alpha2, ShapeV1Alpha1)
}

// GroupVersionKind returns the BundleDeployment kind in this shape's version.
func (s Shape) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: RukpakGroup, Version: string(s), Kind: BundleDeploymentKind}
}

// MaxNameLength is the longest BundleDeployment name rukpak's CRD accepts
// in this shape (its metadata.name maxLength: 45 in v1alpha1, whose Bundles
// take the name plus 7 characters; 52 in v1alpha2). A BundleDeployment is
// named after its PlatformOperator, so this bounds PlatformOperator names.
func (s Shape) MaxNameLength() int {
	if s == ShapeV1Alpha1 {
		return 45
	}
	return 52
}

// ValidateName checks that a PlatformOperator's name can name its
// BundleDeployment in this shape. The error is a *FieldError for
// metadata.name.
func (s Shape) ValidateName(name string) error {
	if max := s.MaxNameLength(); len(name) > max {
		return &FieldError{Field: "metadata.name", Value: name,
			Detail: fmt.Sprintf("longer than %d characters (%d): rukpak's %s BundleDeployment, named after the PlatformOperator, takes at most %d", max, len(name), s, max)}
	}
	return nil
}

// RelatedObjects returns the aggregate ClusterOperator's relatedObjects:
// the manager's namespace and every PlatformOperator (upstream's two), and
// every BundleDeployment, which hold rukpak's reasons; v1alpha1 adds every
// Bundle, which holds the unpack state (release-4.12's four).
func (s Shape) RelatedObjects() []configv1.ObjectReference {
	refs := []configv1.ObjectReference{
		{Group: "", Resource: "namespaces", Name: Namespace},
		{Group: Group, Resource: "platformoperators"},
		{Group: RukpakGroup, Resource: "bundledeployments"},
	}
	if s == ShapeV1Alpha1 {
		refs = append(refs, configv1.ObjectReference{Group: RukpakGroup, Resource: "bundles"})
	}
	return refs
}

// ControllerReference returns the controller owner reference a
// BundleDeployment carries to its PlatformOperator. With an empty UID (a
// render preview) the API server rejects it, so a preview cannot be applied
// by mistake.
func ControllerReference(po *PlatformOperator) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion:         Group + "/" + Version,
		Kind:               Kind,
		Name:               po.Name,
		UID:                po.UID,
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}
}

// BundleDeployment returns the BundleDeployment that installs bundle b for
// PlatformOperator po, in shape s: named after po, annotated with the
// package and bundle names, controlled by po (the owner reference has no
// uid when po has none).
func BundleDeployment(po *PlatformOperator, b *Bundle, s Shape) map[string]any {
	ref := ControllerReference(po)
	owner := map[string]any{
		"apiVersion":         ref.APIVersion,
		"kind":               ref.Kind,
		"name":               ref.Name,
		"controller":         true,
		"blockOwnerDeletion": true,
	}
	if ref.UID != "" {
		owner["uid"] = string(ref.UID)
	}
	source := map[string]any{
		"type":  "image",
		"image": map[string]any{"ref": b.Image},
	}
	var spec map[string]any
	switch s {
	case ShapeV1Alpha1:
		spec = map[string]any{
			"provisionerClassName": PlainProvisioner,
			"template": map[string]any{
				"spec": map[string]any{
					"provisionerClassName": RegistryProvisioner,
					"source":               source,
				},
			},
		}
	default:
		s = ShapeV1Alpha2
		spec = map[string]any{
			"provisionerClassName": RegistryProvisioner,
			"source":               source,
		}
	}
	return map[string]any{
		"apiVersion": RukpakGroup + "/" + string(s),
		"kind":       BundleDeploymentKind,
		"metadata": map[string]any{
			"name": po.Name,
			"annotations": map[string]any{
				AnnotationPackage: b.Package,
				AnnotationBundle:  b.Name,
			},
			"ownerReferences": []any{owner},
		},
		"spec": spec,
	}
}

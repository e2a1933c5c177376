package platformoperators

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Shape is the BundleDeployment API version the component writes.
type Shape string

// The shapes.
const (
	// ShapeV1Alpha2 is rukpak's v1alpha2 BundleDeployment: provisioner class
	// core-rukpak-io-registry and the bundle image as its source. The default.
	ShapeV1Alpha2 Shape = "v1alpha2"
	// ShapeV1Alpha1 is the enhancement's v1alpha1 BundleDeployment: the plain
	// provisioner applies a Bundle template that the registry provisioner
	// unpacks from the bundle image.
	ShapeV1Alpha1 Shape = "v1alpha1"
)

// Provisioner class names, per shape.
const (
	RegistryProvisioner         = "core-rukpak-io-registry"
	PlainProvisionerV1Alpha1    = "core.rukpak.io/plain"
	RegistryProvisionerV1Alpha1 = "core.rukpak.io/registry"
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
			"provisionerClassName": PlainProvisionerV1Alpha1,
			"template": map[string]any{
				"spec": map[string]any{
					"provisionerClassName": RegistryProvisionerV1Alpha1,
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

package platformoperators

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Names of the API groups, kinds and objects the component works with.
const (
	// Group is the PlatformOperator API group.
	Group = "platform.openshift.io"
	// Version is the PlatformOperator API version.
	Version = "v1alpha1"
	// Kind is the PlatformOperator kind.
	Kind = "PlatformOperator"
	// RukpakGroup is the BundleDeployment API group.
	RukpakGroup = "core.rukpak.io"
	// BundleDeploymentKind is the BundleDeployment kind.
	BundleDeploymentKind = "BundleDeployment"

	// Namespace is the manager's namespace.
	Namespace = "openshift-platform-operators"
	// ManagerDeployment is the manager's Deployment in Namespace.
	ManagerDeployment = "platform-operators-controller-manager"
	// AggregateClusterOperator is the ClusterOperator that reports the state
	// of all PlatformOperators.
	AggregateClusterOperator = "platform-operators-aggregated"
	// CoreClusterOperator is the ClusterOperator that reports the manager's
	// own health.
	CoreClusterOperator = "platform-operators-core"

	// PlatformOperatorCRD and BundleDeploymentCRD are the names of the CRDs
	// the payload ships.
	PlatformOperatorCRD = "platformoperators." + Group
	BundleDeploymentCRD = "bundledeployments." + RukpakGroup

	// AnnotationPackage and AnnotationBundle on a BundleDeployment name the
	// package and the catalog bundle it installs.
	AnnotationPackage = Group + "/package"
	AnnotationBundle  = Group + "/bundle"
)

// The Installed condition of a PlatformOperator and its reasons.
const (
	// ConditionInstalled is True when the PlatformOperator's bundle is
	// installed.
	ConditionInstalled = "Installed"
	// ReasonSourceFailed: no bundle could be picked for the package (not in
	// the catalog, no catalog, or every bundle rejected).
	ReasonSourceFailed = "SourceFailed"
	// ReasonInstallFailed: the BundleDeployment could not be created, reports
	// a failure, belongs to someone else, or the package is claimed by an
	// older PlatformOperator.
	ReasonInstallFailed = "InstallFailed"
	// ReasonUnpackPending: the bundle is not unpacked yet.
	ReasonUnpackPending = "UnpackPending"
	// ReasonInstallPending: the bundle is unpacked but not installed yet.
	ReasonInstallPending = "InstallPending"
	// ReasonInstallSuccessful: the bundle is installed.
	ReasonInstallSuccessful = "InstallSuccessful"
)

// BundleDeployment condition types and the reasons of its HasValidBundle
// condition that mean "still working" (rukpak's API).
const (
	BundleConditionHasValidBundle = "HasValidBundle"
	BundleConditionInstalled      = "Installed"

	bundleReasonUnpackPending = "UnpackPending"
	bundleReasonUnpacking     = "Unpacking"
)

// GroupVersionKind is PlatformOperator's.
var GroupVersionKind = schema.GroupVersionKind{Group: Group, Version: Version, Kind: Kind}

// PlatformOperator asks for an OLM package to be installed with the cluster.
// openshift/api no longer carries the type, so the component keeps its own
// copy of the v1alpha1 shape.
type PlatformOperator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PlatformOperatorSpec   `json:"spec"`
	Status PlatformOperatorStatus `json:"status,omitempty"`
}

// PlatformOperatorSpec is what the admin asks for.
type PlatformOperatorSpec struct {
	// Package is the OLM package to install.
	Package PackageSpec `json:"package"`
}

// PackageSpec names an OLM package.
type PackageSpec struct {
	// Name is the package name: required, at most 56 characters, lowercase
	// alphanumerics and '-', starting and ending with an alphanumeric.
	Name string `json:"name"`
}

// PlatformOperatorStatus is what the manager reports.
type PlatformOperatorStatus struct {
	// Conditions hold the Installed condition.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ActiveBundleDeployment names the BundleDeployment that installed the
	// package; nil while it is not installed.
	ActiveBundleDeployment *ActiveBundleDeployment `json:"activeBundleDeployment,omitempty"`
}

// ActiveBundleDeployment references a BundleDeployment by name.
type ActiveBundleDeployment struct {
	Name string `json:"name"`
}

// DeepCopy returns a copy of s that shares nothing with it.
func (s PlatformOperatorStatus) DeepCopy() *PlatformOperatorStatus {
	out := PlatformOperatorStatus{}
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	if s.ActiveBundleDeployment != nil {
		a := *s.ActiveBundleDeployment
		out.ActiveBundleDeployment = &a
	}
	return &out
}

package platformoperators

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
)

// MaxPackageNameLength is the longest package name a PlatformOperator may
// name (the CRD's maxLength).
const MaxPackageNameLength = 56

// PackageNamePattern is the CRD's pattern for spec.package.name, as
// openshift/api writes it: without anchors. The API server matches a CRD
// pattern anywhere in the value, so it accepts any name holding one
// lowercase letter or digit ("Cert-Manager", "cert.manager", "-cert").
// ValidatePackageName matches it against the whole name: the API's stated
// intent (a DNS-1123 label, "more restrictions to package names ... so code
// can make more confident assumptions"), which kubebuilder's unanchored
// output loses.
const PackageNamePattern = `[a-z0-9]([-a-z0-9]*[a-z0-9])?`

var (
	packageNameRE    = regexp.MustCompile(`^` + PackageNamePattern + `$`)
	packageNameCRDRE = regexp.MustCompile(PackageNamePattern)
)

// FieldError is one problem with one field of a PlatformOperator.
type FieldError struct {
	// Field is the path of the field, e.g. "spec.package.name".
	Field string
	// Value is the offending value, or "" when the problem is not about a
	// value (a missing field, for one).
	Value string
	// Detail says what is wrong.
	Detail string
}

// Error prints `FIELD "VALUE": DETAIL`, or `FIELD: DETAIL` without a value.
func (e *FieldError) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Detail
	}
	return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Detail)
}

// ValidatePackageName checks a package name: required and at most
// MaxPackageNameLength characters as the CRD checks, and all of it matching
// PackageNamePattern, which is stricter than the CRD (see
// PackageNamePattern): a name the API server accepts only because the
// pattern is unanchored is refused, and the message says so. The error is a
// *FieldError for spec.package.name.
func ValidatePackageName(name string) error {
	const field = "spec.package.name"
	switch {
	case name == "":
		return &FieldError{Field: field, Detail: "required"}
	case len(name) > MaxPackageNameLength:
		return &FieldError{Field: field, Value: name, Detail: fmt.Sprintf("longer than %d characters (%d)", MaxPackageNameLength, len(name))}
	case !packageNameRE.MatchString(name):
		detail := "must be a lowercase DNS label: letters, digits and '-', starting and ending with a letter or digit (^" + PackageNamePattern + "$)"
		if packageNameCRDRE.MatchString(name) {
			detail += "; the API server accepts it only because the CRD's pattern is unanchored"
		}
		return &FieldError{Field: field, Value: name, Detail: detail}
	}
	return nil
}

// CRDAcceptsPackageName reports whether the API server accepts name as
// spec.package.name with the payload's CRD: not empty, at most
// MaxPackageNameLength characters, and PackageNamePattern somewhere in it.
func CRDAcceptsPackageName(name string) bool {
	return name != "" && len(name) <= MaxPackageNameLength && packageNameCRDRE.MatchString(name)
}

// DecodePlatformOperator decodes and checks a PlatformOperator object:
// apiVersion platform.openshift.io/v1alpha1, no unknown fields, no
// namespace (the kind is cluster-scoped), a name that is a DNS subdomain
// (the BundleDeployment takes it) and a valid spec.package.name. Every
// problem is returned, joined; each is a *FieldError.
func DecodePlatformOperator(obj map[string]any) (*PlatformOperator, error) {
	po := &PlatformOperator{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, po, true); err != nil {
		return nil, &FieldError{Field: "(object)", Detail: err.Error()}
	}
	var errs []error
	if po.APIVersion != Group+"/"+Version {
		errs = append(errs, &FieldError{Field: "apiVersion", Value: po.APIVersion, Detail: "want " + Group + "/" + Version})
	}
	if po.Namespace != "" {
		errs = append(errs, &FieldError{Field: "metadata.namespace", Value: po.Namespace, Detail: "must be empty: PlatformOperator is cluster-scoped"})
	}
	if msgs := validation.IsDNS1123Subdomain(po.Name); len(msgs) > 0 {
		errs = append(errs, &FieldError{Field: "metadata.name", Value: po.Name, Detail: strings.Join(msgs, "; ")})
	}
	if err := ValidatePackageName(po.Spec.Package.Name); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return po, nil
}

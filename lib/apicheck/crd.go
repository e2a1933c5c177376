package apicheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// compiledCRD is a CustomResourceDefinition made ready to check its
// objects: per version, the structural schema and the validator.
type compiledCRD struct {
	namespaced bool
	versions   map[string]*compiledVersion
	err        error // the CRD itself cannot be read: its objects are not checked
}

type compiledVersion struct {
	served     bool
	status     bool // status is a subresource: a create or update ignores it
	structural *structuralschema.Structural
	validator  *validate.SchemaValidator
	err        error // the schema cannot be compiled
}

// compile returns the compiled form of crd, once per Cache.
func (c *Checker) compile(crd *manifest.Manifest) *compiledCRD {
	c.cache.mu.Lock()
	cc, ok := c.cache.compiled[crd]
	c.cache.mu.Unlock()
	if ok {
		return cc
	}
	cc = compileCRD(crd.Obj)
	c.cache.mu.Lock()
	c.cache.compiled[crd] = cc
	c.cache.mu.Unlock()
	return cc
}

func compileCRD(obj *unstructured.Unstructured) *compiledCRD {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &crd); err != nil {
		return &compiledCRD{err: err}
	}
	cc := &compiledCRD{namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped, versions: map[string]*compiledVersion{}}
	for _, v := range crd.Spec.Versions {
		cv := &compiledVersion{served: v.Served, status: v.Subresources != nil && v.Subresources.Status != nil}
		cc.versions[v.Name] = cv
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			cv.err = err
			continue
		}
		ss, err := structuralschema.NewStructural(&internal)
		if err != nil {
			cv.err = err
			continue
		}
		// The structural schema as an OpenAPI schema, validated with
		// kube-openapi's validator: what the API server's
		// apiextensions validation runs (without its CEL rules, and
		// without linking CEL: k8s.io/apiextensions-apiserver's
		// validation package brings cel-go and k8s.io/apiserver along).
		cv.structural = ss
		cv.validator = validate.NewSchemaValidator(ss.ToKubeOpenAPI(), nil, "", strfmt.Default)
	}
	return cc
}

// checkCustom checks a custom resource as the API server checks it on
// create: the version must be served; unknown fields are refused
// (server-side apply refuses them: "field not declared in schema"), but
// for an object only ever created (created: a POST prunes them, which is
// a warning); then defaulting, and the schema's validation and list
// rules; the name must be a DNS subdomain and the namespace match the
// scope.
func (c *Checker) checkCustom(crd *manifest.Manifest, u *unstructured.Unstructured, created bool) []Problem {
	cc := c.compile(crd)
	if cc.err != nil {
		return nil // the CRD's own problems are reported on the CRD
	}
	var out []Problem
	bad := func(field, format string, args ...any) {
		out = append(out, Problem{Field: field, Message: fmt.Sprintf(format, args...), Severity: Error})
	}
	for _, msg := range apivalidation.NameIsDNSSubdomain(u.GetName(), false) {
		bad("metadata.name", "%q: %s", u.GetName(), msg)
	}
	switch {
	case cc.namespaced && u.GetNamespace() == "":
		bad("metadata.namespace", "required: %s is namespaced (its CustomResourceDefinition %s)", u.GetKind(), crd.Position())
	}
	version := u.GroupVersionKind().Version
	cv, ok := cc.versions[version]
	switch {
	case !ok:
		bad("apiVersion", "version %s of %s is not in its CustomResourceDefinition %s", version, u.GetKind(), crd.Position())
		return out
	case !cv.served:
		bad("apiVersion", "version %s of %s is not served (its CustomResourceDefinition %s)", version, u.GetKind(), crd.Position())
		return out
	case cv.structural == nil:
		return out
	}
	sent, dropped, err := asSent(u)
	if err != nil {
		bad("", "%v", err)
		return out
	}
	for _, p := range dropped {
		out = append(out, Problem{Field: p, Message: "field not declared in the " + u.GetKind() + " type: apply drops it (as the CVO does)", Severity: Warning})
	}
	obj := runtime.DeepCopyJSON(sent.Object)
	if cv.status {
		// The server ignores status on create and update when it is a
		// subresource.
		delete(obj, "status")
	}
	opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
	for _, p := range pruning.PruneWithOptions(obj, cv.structural, true, opts) {
		if created {
			out = append(out, Problem{Field: p, Severity: Warning,
				Message: fmt.Sprintf("field not declared in the schema of %s (its CustomResourceDefinition %s): the server drops it when the object is created", u.GetKind(), crd.Position())})
			continue
		}
		bad(p, "field not declared in the schema of %s (its CustomResourceDefinition %s): server-side apply refuses it", u.GetKind(), crd.Position())
	}
	applyDefaults(obj, cv.structural)
	out = append(out, resultProblems(cv.validator.Validate(obj))...)
	out = appendFieldErrors(out, listtype.ValidateListSetsAndMaps(nil, cv.structural, obj))
	for i := range out {
		out[i].Field = strings.TrimPrefix(out[i].Field, "<nil>.")
	}
	return out
}

// applyDefaults sets, in x, the default of every field the schema gives
// one and x leaves out, as the API server does before it validates.
func applyDefaults(x any, s *structuralschema.Structural) {
	if s == nil {
		return
	}
	switch t := x.(type) {
	case map[string]any:
		for k, prop := range s.Properties {
			if _, ok := t[k]; !ok && prop.Default.Object != nil {
				t[k] = runtime.DeepCopyJSONValue(prop.Default.Object)
			}
		}
		for k, v := range t {
			if prop, ok := s.Properties[k]; ok {
				applyDefaults(v, &prop)
			} else if s.AdditionalProperties != nil {
				applyDefaults(v, s.AdditionalProperties.Structural)
			}
		}
	case []any:
		for _, v := range t {
			applyDefaults(v, s.Items)
		}
	}
}

// resultProblems turns kube-openapi's validation errors into problems
// worded as the API server words them (field.Required, NotSupported,
// TypeInvalid, Invalid).
func resultProblems(r *validate.Result) []Problem {
	if r == nil || r.IsValid() {
		return nil
	}
	var out []Problem
	for _, err := range r.Errors {
		var ve *openapierrors.Validation
		if !errors.As(err, &ve) {
			out = append(out, Problem{Message: err.Error(), Severity: Error})
			continue
		}
		path := field.NewPath("")
		if name := strings.TrimPrefix(ve.Name, "."); name != "" && name != "." {
			path = field.NewPath(name)
		}
		value := ve.Value
		if value == nil {
			value = ""
		}
		var fe *field.Error
		switch ve.Code() {
		case openapierrors.RequiredFailCode:
			fe = field.Required(path, "")
		case openapierrors.EnumFailCode:
			var allowed []string
			for _, v := range ve.Values {
				if s, ok := v.(string); ok {
					allowed = append(allowed, s)
				} else {
					b, _ := json.Marshal(v)
					allowed = append(allowed, string(b))
				}
			}
			fe = field.NotSupported(path, ve.Value, allowed)
		case openapierrors.InvalidTypeCode:
			fe = field.TypeInvalid(path, value, ve.Error())
		default:
			fe = field.Invalid(path, value, ve.Error())
		}
		out = append(out, problemOf(fe, Error))
	}
	return out
}

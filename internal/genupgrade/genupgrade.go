// Package genupgrade makes the releases B an upgrade from the real payload
// (release A, ../shared/testdata/ocp-payload) goes to: the same files as
// A, at another version, with each kind of change an update brings:
//
//   - the version (release-metadata, with A as "previous", and the
//     image-references ImageStream's name), and the ClusterOperators'
//     versions: A's placeholder 0.0.1-snapshot becomes the version, as
//     `oc adm release new` replaces it, so each operator has to report it;
//   - a changed Deployment image (the DNS operator's);
//   - a removed object with its delete manifest (the DNS operator's
//     RoleBinding, annotated release.openshift.io/delete);
//   - a removed file without a delete manifest (the DNS operator's
//     NetworkPolicies: orphans);
//   - a file moved to another run level (the service CA operator's roles,
//     50 to 70);
//   - a new CustomResourceDefinition and a custom resource of it in one
//     run level, the resource's component sorting first;
//   - an object whose capability changes (the DNS operator's ClusterRole
//     joins Insights), which a cluster without Insights then enables
//     implicitly.
//
// Bump makes the simplest B of any payload (the built-in one too): the
// same files at another version. Release is Bump with the metadata an
// update graph needs (previous, next, channels).
//
// The test of upgrades and hack/gen-upgrade use it.
//
// May import: nothing.
// Cluster I/O: none.
package genupgrade

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Object names an object the generator changes: "Kind ns/name" or "Kind
// name" for a cluster-scoped one, as the tests read it.
type Object struct {
	Group, Kind, Namespace, Name string
}

// Variant says what Write changed, for tests to check.
type Variant struct {
	// Version is B's, Previous A's.
	Version, Previous string
	// Image is the Deployment whose image changed, to NewImage.
	Image    Object
	NewImage string
	// Deleted has a delete manifest in B.
	Deleted Object
	// Orphans are in A's files that B drops without a delete manifest.
	Orphans []Object
	// Moved is in a file B moves from MovedFrom to MovedTo.
	Moved              Object
	MovedFrom, MovedTo string
	// CRD and CR are new, in one run level.
	CRD, CR Object
	// Capability is the capability Implicit joins.
	Capability string
	Implicit   Object
}

// The files Write changes, in release-manifests/.
const (
	deploymentFile  = "0000_70_dns-operator_02-deployment.yaml"
	deploymentImage = "openshift/origin-cluster-dns-operator:latest"
	deleteFile      = "0000_70_dns-operator_01-role-binding.yaml"
	orphanFile      = "0000_70_dns-operator_01-network-policy.yaml"
	moveFrom        = "0000_50_service-ca-operator_00_roles.yaml"
	moveTo          = "0000_70_service-ca-operator_00_roles.yaml"
	capabilityFile  = "0000_70_dns-operator_00-cluster-role.yaml"
	crdFile         = "0000_70_zz-upgrade-widgets_00_crd.yaml"
	crFile          = "0000_70_aa-upgrade-widgets_00_widget.yaml"
	capability      = "Insights"
)

// placeholderVersion is a ClusterOperator version line of A that names
// the release to come.
var placeholderVersion = regexp.MustCompile(`(?m)^([ \t]+version: )"?0\.0\.1-snapshot"?[ \t]*$`)

// includeAll are the inclusion annotations of the new objects.
const includeAll = `    include.release.openshift.io/hypershift: "true"
    include.release.openshift.io/ibm-cloud-managed: "true"
    include.release.openshift.io/self-managed-high-availability: "true"
    include.release.openshift.io/single-node-developer: "true"
`

// Write writes release B of version from the payload at src (A) to dst,
// which must not exist yet or be empty. It fails, naming the file, when
// src lacks a file or a text it changes.
func Write(src, dst, version string) (*Variant, error) {
	if version == "" {
		return nil, errors.New("genupgrade: no version")
	}
	v := &Variant{Version: version,
		Image:     Object{Group: "apps", Kind: "Deployment", Namespace: "openshift-dns-operator", Name: "dns-operator"},
		NewImage:  "openshift/origin-cluster-dns-operator:v" + version,
		Deleted:   Object{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding", Namespace: "openshift-dns-operator", Name: "dns-operator"},
		Orphans:   []Object{{Group: "networking.k8s.io", Kind: "NetworkPolicy", Namespace: "openshift-dns-operator", Name: "dns-operator-deny-all"}, {Group: "networking.k8s.io", Kind: "NetworkPolicy", Namespace: "openshift-dns-operator", Name: "dns-operator-allow"}},
		Moved:     Object{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding", Name: "system:openshift:operator:service-ca-operator"},
		MovedFrom: "50/service-ca-operator", MovedTo: "70/service-ca-operator",
		CRD:        Object{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.upgrade.payload-apply.test"},
		CR:         Object{Group: "upgrade.payload-apply.test", Kind: "Widget", Name: "sample"},
		Capability: capability,
		Implicit:   Object{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "openshift-dns-operator"},
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	root := os.DirFS(src)
	seen := map[string]bool{}
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dir, name := path.Split(p)
		if d.IsDir() || (dir != "manifests/" && dir != "release-manifests/") {
			return nil
		}
		data, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		if dir == "release-manifests/" {
			seen[name] = true
			if name, data, err = v.change(name, data); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if name == "" {
				return nil
			}
		}
		return writeFile(filepath.Join(dst, dir, name), data)
	})
	if err != nil {
		return nil, err
	}
	for _, f := range []string{deploymentFile, deleteFile, orphanFile, moveFrom, capabilityFile, "release-metadata", "image-references"} {
		if !seen[f] {
			return nil, fmt.Errorf("%s: release-manifests/%s: missing", src, f)
		}
	}
	for name, data := range map[string]string{crdFile: widgetCRD, crFile: widget} {
		if err := writeFile(filepath.Join(dst, "release-manifests", name), []byte(data)); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Bump writes the payload at src to dst with only its version changed
// (release-metadata, with src's version as "previous"; the image-references
// ImageStream's name) and returns src's version. Files other than those of
// manifests/ and release-manifests/ are left out.
func Bump(src, dst, version string) (string, error) {
	if version == "" {
		return "", errors.New("genupgrade: no version")
	}
	v := &Variant{Version: version}
	root := os.DirFS(src)
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dir, name := path.Split(p)
		if d.IsDir() || (dir != "manifests/" && dir != "release-manifests/") {
			return nil
		}
		data, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		if dir == "release-manifests/" && (name == "release-metadata" || name == "image-references") {
			if _, data, err = v.change(name, data); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		return writeFile(filepath.Join(dst, dir, name), data)
	})
	if err == nil && v.Previous == "" {
		err = fmt.Errorf("%s: release-manifests/release-metadata: missing, or without a version", src)
	}
	return v.Previous, err
}

// Metadata is a release-metadata file's content (cincinnati-metadata-v0).
type Metadata struct {
	// Version is the release's version; Previous and Next the versions
	// that update into it and that it updates into.
	Version        string
	Previous, Next []string
	// Metadata is the free-form part (url, the channels, edge edits).
	Metadata map[string]string
}

// Release writes the payload at src to dst as Bump does, with md as its
// release-metadata: the releases of an update graph (Previous nil: src's
// version, as Bump; empty: none).
func Release(src, dst string, md Metadata) error {
	prev, err := Bump(src, dst, md.Version)
	if err != nil {
		return err
	}
	if md.Previous == nil {
		md.Previous = []string{prev}
	}
	out := map[string]any{"kind": "cincinnati-metadata-v0", "version": md.Version, "previous": md.Previous}
	if len(md.Next) > 0 {
		out["next"] = md.Next
	}
	if len(md.Metadata) > 0 {
		out["metadata"] = md.Metadata
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dst, "release-manifests", "release-metadata"), append(data, '\n'))
}

func writeFile(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, data, 0o644)
}

// change returns a file of release-manifests/ as B has it: its name ("" to
// drop it) and content.
func (v *Variant) change(name string, data []byte) (string, []byte, error) {
	text := string(data)
	replace := func(old, new string) error {
		if !strings.Contains(text, old) {
			return fmt.Errorf("no %q to change", old)
		}
		text = strings.Replace(text, old, new, 1)
		return nil
	}
	var err error
	switch name {
	case "release-metadata":
		var md map[string]any
		if err := json.Unmarshal(data, &md); err != nil {
			return "", nil, err
		}
		v.Previous, _ = md["version"].(string)
		md["version"], md["previous"] = v.Version, []string{v.Previous}
		out, err := json.MarshalIndent(md, "", "  ")
		return name, append(out, '\n'), err
	case "image-references":
		var is map[string]any
		if err := json.Unmarshal(data, &is); err != nil {
			return "", nil, err
		}
		md, ok := is["metadata"].(map[string]any)
		if !ok {
			return "", nil, errors.New("no metadata")
		}
		md["name"] = v.Version
		out, err := json.MarshalIndent(is, "", "  ")
		return name, append(out, '\n'), err
	case deploymentFile:
		err = replace(deploymentImage, v.NewImage)
	case deleteFile:
		text = fmt.Sprintf(`# Deleted in %s: the CVO deletes the object of a manifest annotated
# release.openshift.io/delete.
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: %s
  namespace: %s
  annotations:
    include.release.openshift.io/ibm-cloud-managed: "true"
    include.release.openshift.io/self-managed-high-availability: "true"
    include.release.openshift.io/single-node-developer: "true"
    release.openshift.io/delete: "true"
`, v.Version, v.Deleted.Name, v.Deleted.Namespace)
	case orphanFile:
		return "", nil, nil
	case moveFrom:
		name = moveTo
	case capabilityFile:
		err = replace("  annotations:\n", "  annotations:\n    capability.openshift.io/name: "+capability+"\n")
	}
	if err != nil {
		return "", nil, err
	}
	if strings.Contains(text, "kind: ClusterOperator") {
		text = placeholderVersion.ReplaceAllString(text, `${1}"`+v.Version+`"`)
	}
	return name, []byte(text), nil
}

// widgetCRD and widget are the new CustomResourceDefinition and a resource
// of it, in run level 70, the resource's component (aa-...) sorting before
// the CRD's (zz-...).
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.upgrade.payload-apply.test
  annotations:
` + includeAll + `spec:
  group: upgrade.payload-apply.test
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: integer
`

const widget = `apiVersion: upgrade.payload-apply.test/v1
kind: Widget
metadata:
  name: sample
  annotations:
` + includeAll + `spec:
  size: 3
`

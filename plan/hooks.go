package plan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/payload-apply/payload-apply/components/ingress"
	"github.com/payload-apply/payload-apply/components/nodetuning"
	"github.com/payload-apply/payload-apply/components/platformoperators"
	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/profiles"
)

// ExtraDir prefixes the File of every extra manifest.
const ExtraDir = "extra"

// Components configure the payload's components. The zero value is each
// component's default.
type Components struct {
	// HyperShiftNaming names the ConfigMaps node tuning writes on a hosted
	// control plane (--hypershift-naming); "" is nodetuning.NamingSeed.
	HyperShiftNaming nodetuning.Naming
	// BundleDeploymentShape is the API version of the BundleDeployments
	// the platform operators manager writes (--bundle-deployment-shape);
	// "" is platformoperators.ShapeV1Alpha2.
	BundleDeploymentShape platformoperators.Shape
	// Catalog is the file-based operator catalog the platform operators
	// manager picks bundles from (--catalog), or nil.
	Catalog fs.FS
}

// DefaultHooks returns the render hooks of the payload's components,
// configured by c, in the order they run.
func DefaultHooks(c Components) []component.Hook {
	return []component.Hook{
		ingress.Hook{},
		nodetuning.Hook{Naming: c.HyperShiftNaming},
		platformoperators.Hook{Catalog: c.Catalog, Shape: c.BundleDeploymentShape},
	}
}

// LoadExtraManifests reads the .yaml, .yml and .json files at the top of
// fsys in name order, as the installer's openshift/ directory holds admin
// manifests. Their File is "extra/<name>"; a name that follows
// 0000_<NN>_<component>_ places them at that run level, any other runs after
// the payload. Every bad document is reported. The payload's bounds hold
// here too: files above the file size limit, more than
// payload.DefaultMaxFiles files, more than payload.DefaultMaxPayloadSize
// bytes in all, and anything but regular files are refused. ctx ending
// stops it between files.
func LoadExtraManifests(ctx context.Context, fsys fs.FS) ([]*manifest.Manifest, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("extra manifests: %w", err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() && payload.IsManifestFile(e.Name()) {
			n++
		}
	}
	if n > payload.DefaultMaxFiles {
		return nil, &manifest.ParseError{File: ExtraDir, Doc: -1, Err: &manifest.LimitError{What: "file count", Size: int64(n), Limit: payload.DefaultMaxFiles}}
	}
	var out []*manifest.Manifest
	var errs []error
	var total int64
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.IsDir() || !payload.IsManifestFile(e.Name()) {
			continue
		}
		name := path.Join(ExtraDir, e.Name())
		data, err := manifest.ReadFile(fsys, e.Name(), 0)
		if err != nil {
			errs = append(errs, &manifest.ParseError{File: name, Doc: -1, Err: err})
			continue
		}
		if total += int64(len(data)); total > payload.DefaultMaxPayloadSize {
			errs = append(errs, &manifest.ParseError{File: name, Doc: -1, Err: &manifest.LimitError{What: "payload size", Size: total, Limit: payload.DefaultMaxPayloadSize}})
			break
		}
		ms, err := manifest.Parse(name, data, manifest.ParseOptions{})
		errs = append(errs, err)
		for i := range ms {
			out = append(out, &ms[i])
		}
	}
	return out, errors.Join(errs...)
}

// runHooks runs every hook on the same input and merges their outputs:
// objects removed by any hook go, objects added by any hook come in.
func runHooks(ctx context.Context, hooks []component.Hook, in *component.Input) ([]*manifest.Manifest, []manifest.Finding, []component.StepSpec, error) {
	removed := map[manifest.ID]bool{}
	var added []*manifest.Manifest
	var findings []manifest.Finding
	var steps []component.StepSpec
	var errs []error
	for _, h := range hooks {
		out, err := h.Render(ctx, in)
		if err != nil {
			errs = append(errs, fmt.Errorf("component %s: %w", h.Name(), err))
			continue
		}
		if out == nil {
			continue
		}
		for _, id := range out.Remove {
			removed[id] = true
		}
		added = append(added, out.Add...)
		findings = append(findings, out.Findings...)
		steps = append(steps, out.Steps...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, nil, err
	}
	final := make([]*manifest.Manifest, 0, len(in.Objects)+len(in.Extra)+len(added))
	for _, list := range [][]*manifest.Manifest{in.Objects, in.Extra} {
		for _, m := range list {
			if !removed[m.ID()] {
				final = append(final, m)
			}
		}
	}
	return append(final, added...), findings, steps, nil
}

// defaultClusterConfig returns the cluster facts a profile implies when no
// --cluster-config is given: its default topology, on platform None.
func defaultClusterConfig(p *profiles.Profile) *component.ClusterConfig {
	return &component.ClusterConfig{
		Infrastructure: &configv1.Infrastructure{
			TypeMeta:   metav1.TypeMeta{APIVersion: "config.openshift.io/v1", Kind: "Infrastructure"},
			ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
			Status: configv1.InfrastructureStatus{
				ControlPlaneTopology:   p.DefaultTopology.ControlPlaneTopology,
				InfrastructureTopology: p.DefaultTopology.InfrastructureTopology,
				PlatformStatus:         &configv1.PlatformStatus{Type: configv1.NonePlatformType},
			},
		},
		Profile: p.Name,
	}
}

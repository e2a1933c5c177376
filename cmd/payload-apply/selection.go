package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/components/nodetuning"
	"github.com/payload-apply/payload-apply/components/platformoperators"
	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/lib/safefs"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/profiles"
)

// selectionFlags are the flags every command that selects from a payload
// shares (render, graph, validate, and later diff and apply).
type selectionFlags struct {
	payload                string
	releaseImage           string
	profile                string
	featureSet             string
	featureGates           []string
	featureGateManifest    string
	baselineCapabilitySet  string
	additionalCapabilities []string
	excludeID              string
	clusterConfig          string
	extraManifests         string
	hypershiftNaming       string
	catalog                string
	bundleDeploymentShape  string
	profilesDir            string
	overlaysDir            string
	registry               registryFlags

	fs *pflag.FlagSet
	// source is where --payload came from, once complete has run.
	source payloadSource
}

func (f *selectionFlags) addFlags(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.payload, "payload", "", "payload: a directory with manifests/ and/or release-manifests/, an OCI image layout directory, an image tarball, or a registry reference HOST/REPO:TAG, HOST/REPO@sha256:... or docker://... (default: the reference payload built into the binary, which embedded://payload-apply names)")
	fs.StringVar(&f.releaseImage, "release-image", "", "pull spec the manifests/ templates see as {{.ReleaseImage}} (default: quay.io/openshift-release-dev/ocp-release:<version>)")
	fs.StringVar(&f.profile, "profile", "", "cluster profile (default: "+profiles.Default+")")
	fs.StringVar(&f.featureSet, "feature-set", "", "feature set: Default, TechPreviewNoUpgrade, DevPreviewNoUpgrade, CustomNoUpgrade or OKD (default: Default)")
	fs.StringSliceVar(&f.featureGates, "feature-gates", nil, "feature gates, comma separated: Gate enables, -Gate disables; with CustomNoUpgrade exactly the enabled gates")
	fs.StringVar(&f.featureGateManifest, "feature-gate-manifest", "", "a FeatureGate manifest whose status lists the enabled gates for the release version")
	fs.StringVar(&f.baselineCapabilitySet, "baseline-capability-set", "", "baseline capability set (e.g. None, vCurrent); with --additional-capabilities turns on the capability filter")
	fs.StringSliceVar(&f.additionalCapabilities, "additional-capabilities", nil, "capabilities enabled on top of the baseline, comma separated")
	fs.StringVar(&f.excludeID, "exclude", "", "exclude manifests annotated exclude.release.openshift.io/<ID>: \"true\"")
	fs.StringVar(&f.clusterConfig, "cluster-config", "", "cluster facts as the installer writes them: YAML with config.openshift.io/v1 Infrastructure \"cluster\" and optionally Ingress, FeatureGate, ClusterVersion \"version\" (its spec.overrides) and ConfigMap openshift-config/cluster-profile")
	fs.StringVar(&f.extraManifests, "extra-manifests", "", "directory of admin manifests (PlatformOperators, PerformanceProfiles, IngressControllers, ...) applied as given, not filtered by inclusion annotations")
	fs.StringVar(&f.hypershiftNaming, "hypershift-naming", string(nodetuning.NamingSeed), "names of the ConfigMaps the node tuning component writes on a hosted control plane: seed (tuned-, mc-, kc-<profile>, <profile>-status) or upstream (the node tuning operator's tuned-, machineconfig-, kubeletconfig-, status-<configmap>)")
	fs.StringVar(&f.catalog, "catalog", "", "file-based operator catalog directory (olm.package, olm.channel and olm.bundle documents) the platform operators manager picks bundles from")
	fs.StringVar(&f.bundleDeploymentShape, "bundle-deployment-shape", "v1alpha2", "BundleDeployment the platform operators manager writes, a version the payload's rukpak CRD serves: v1alpha2 (rukpak v0.17.0: registry provisioner, image source) or v1alpha1 (OpenShift 4.12: plain provisioner with a registry Bundle template)")
	addProfileDirFlags(fs, &f.profilesDir, &f.overlaysDir)
	f.registry.addFlags(fs)
}

// addProfileDirFlags binds --profiles-dir and --overlays-dir (shared with
// the profiles command).
func addProfileDirFlags(fs *pflag.FlagSet, profilesDir, overlaysDir *string) {
	fs.StringVar(profilesDir, "profiles-dir", "", "directory of more ClusterProfile definitions (*.yaml), added to the built-in profiles")
	fs.StringVar(overlaysDir, "overlays-dir", "", "directory of more kustomize overlays (<name>/kustomization.yaml), searched with the built-in overlays")
}

// profileSet returns the built-in profiles plus those of --profiles-dir.
func profileSet(dir string) (*profiles.Set, error) {
	set, err := profiles.Embedded()
	if err != nil || dir == "" {
		return set, err
	}
	if err := checkDir("--profiles-dir", dir); err != nil {
		return nil, err
	}
	return set.WithDir(rootFS(dir), filepath.Clean(dir)+"/")
}

// overlaySources returns the overlay source of --overlays-dir, if any.
func overlaySources(dir string) ([]overlay.Source, error) {
	if dir == "" {
		return nil, nil
	}
	if err := checkDir("--overlays-dir", dir); err != nil {
		return nil, err
	}
	return []overlay.Source{{FS: rootFS(dir), Label: filepath.Clean(dir) + "/"}}, nil
}

// checkDir returns a usage error when a directory flag does not name one.
func checkDir(flag, dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return usageErrorf("%s: %v", flag, err)
	}
	if !st.IsDir() {
		return usageErrorf("%s %s: not a directory", flag, dir)
	}
	return nil
}

// complete is what every selecting command's Complete does: no positional
// arguments, then the options of the flags; the plan reports its phases to
// the run's phase recorder (interrupt.go).
func (f *selectionFlags) complete(ctx context.Context, args []string) (plan.Options, error) {
	if len(args) > 0 {
		return plan.Options{}, usageErrorf("unexpected arguments: %v", args)
	}
	if f.extraManifests != "" {
		// Errors and findings name its files as plan.ExtraDir/NAME.
		pathsOf(ctx).add(plan.ExtraDir+"/", filepath.Clean(f.extraManifests)+string(filepath.Separator))
	}
	opts, err := f.options(ctx)
	opts.OnPhase = phaseFunc(ctx)
	if err != nil {
		return opts, err
	}
	return opts, f.checkNames(opts)
}

// options turns the flags into plan options; files named by flags are read
// here, with errors naming the flag and the file, and a registry --payload
// is pulled (or read from the cache).
func (f *selectionFlags) options(ctx context.Context) (plan.Options, error) {
	opts := plan.Options{
		ReleaseImage:           f.releaseImage,
		Profile:                f.profile,
		FeatureSet:             f.featureSet,
		FeatureGates:           f.featureGates,
		BaselineCapabilitySet:  f.baselineCapabilitySet,
		AdditionalCapabilities: f.additionalCapabilities,
		Capabilities:           f.fs.Changed("baseline-capability-set") || f.fs.Changed("additional-capabilities"),
		ExcludeID:              f.excludeID,
	}
	if f.profilesDir != "" {
		set, err := profileSet(f.profilesDir)
		if err != nil {
			return opts, err
		}
		opts.Profiles = set
	}
	srcs, err := overlaySources(f.overlaysDir)
	if err != nil {
		return opts, err
	}
	opts.ExtraOverlays = srcs
	naming, err := nodetuning.ParseNaming(f.hypershiftNaming)
	if err != nil {
		return opts, usageErrorf("--hypershift-naming %q: want %s or %s", f.hypershiftNaming, nodetuning.NamingSeed, nodetuning.NamingUpstream)
	}
	opts.Components.HyperShiftNaming = naming
	f.source = payloadSource{Kind: sourceEmbedded}
	if f.payload != "" {
		fsys, src, err := openPayloadArg(ctx, &f.registry, "--payload", f.payload)
		if err != nil {
			return opts, err
		}
		opts.Payload, f.source = fsys, src
		if src.Parsed != nil {
			opts.Parsed = src.Parsed
		} else {
			opts.PlanCache = f.registry.planCache(ctx)
		}
	}
	if f.clusterConfig != "" {
		data, err := readFlagFile(f.clusterConfig)
		if err != nil {
			return opts, usageErrorf("--cluster-config: %v", err)
		}
		if opts.ClusterConfig, err = component.ParseClusterConfig(f.clusterConfig, data); err != nil {
			return opts, err
		}
	}
	if f.extraManifests != "" {
		if err := checkDir("--extra-manifests", f.extraManifests); err != nil {
			return opts, err
		}
		opts.ExtraManifests = rootFS(f.extraManifests)
	}
	if f.catalog != "" {
		if err := checkDir("--catalog", f.catalog); err != nil {
			return opts, err
		}
		opts.Components.Catalog = rootFS(f.catalog)
	}
	shape, err := platformoperators.ParseShape(f.bundleDeploymentShape)
	if err != nil {
		return opts, usageErrorf("--bundle-deployment-shape: %v", err)
	}
	opts.Components.BundleDeploymentShape = shape
	if f.featureGateManifest != "" {
		data, err := readFlagFile(f.featureGateManifest)
		if err != nil {
			return opts, usageErrorf("--feature-gate-manifest: %v", err)
		}
		var fg configv1.FeatureGate
		if err := yaml.UnmarshalStrict(data, &fg); err != nil {
			return opts, fmt.Errorf("%s: not a FeatureGate: %w", f.featureGateManifest, err)
		}
		if fg.Kind != "FeatureGate" {
			return opts, fmt.Errorf("%s: is a %q, want a config.openshift.io/v1 FeatureGate", f.featureGateManifest, fg.Kind)
		}
		opts.FeatureGate = &fg
	}
	return opts, nil
}

// imageLabels returns the config labels of a payload read from an image,
// or nil for a payload directory.
func imageLabels(fsys fs.FS) map[string]string {
	if img, ok := fsys.(*image.FS); ok {
		if l := img.Labels(); l != nil {
			return l
		}
		return map[string]string{}
	}
	return nil
}

// readFlagFile reads a file named by a flag, refusing one above the
// manifest file size limit, and a named pipe, device or socket without
// opening it (lib/safefs).
func readFlagFile(name string) ([]byte, error) {
	f, err := safefs.Open(name, safefs.Regular)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	max := manifest.DefaultLimits().MaxFileSize
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w", name, &manifest.LimitError{What: "file size", Size: int64(len(data)), Limit: max})
	}
	return data, nil
}

package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/overlay"
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
	profilesDir            string
	overlaysDir            string

	fs *pflag.FlagSet
}

func (f *selectionFlags) addFlags(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.payload, "payload", "", "payload directory with manifests/ and/or release-manifests/ (default: the reference payload built into the binary)")
	fs.StringVar(&f.releaseImage, "release-image", "", "pull spec the manifests/ templates see as {{.ReleaseImage}} (default: quay.io/openshift-release-dev/ocp-release:<version>)")
	fs.StringVar(&f.profile, "profile", "", "cluster profile (default: "+profiles.Default+")")
	fs.StringVar(&f.featureSet, "feature-set", "", "feature set: Default, TechPreviewNoUpgrade, DevPreviewNoUpgrade, CustomNoUpgrade or OKD (default: Default)")
	fs.StringSliceVar(&f.featureGates, "feature-gates", nil, "feature gates, comma separated: Gate enables, -Gate disables; with CustomNoUpgrade exactly the enabled gates")
	fs.StringVar(&f.featureGateManifest, "feature-gate-manifest", "", "a FeatureGate manifest whose status lists the enabled gates for the release version")
	fs.StringVar(&f.baselineCapabilitySet, "baseline-capability-set", "", "baseline capability set (e.g. None, vCurrent); with --additional-capabilities turns on the capability filter")
	fs.StringSliceVar(&f.additionalCapabilities, "additional-capabilities", nil, "capabilities enabled on top of the baseline, comma separated")
	fs.StringVar(&f.excludeID, "exclude", "", "exclude manifests annotated exclude.release.openshift.io/<ID>: \"true\"")
	addProfileDirFlags(fs, &f.profilesDir, &f.overlaysDir)
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
	return set.WithDir(os.DirFS(dir), filepath.Clean(dir)+"/")
}

// overlaySources returns the overlay source of --overlays-dir, if any.
func overlaySources(dir string) ([]overlay.Source, error) {
	if dir == "" {
		return nil, nil
	}
	if err := checkDir("--overlays-dir", dir); err != nil {
		return nil, err
	}
	return []overlay.Source{{FS: os.DirFS(dir), Label: filepath.Clean(dir) + "/"}}, nil
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

// options turns the flags into plan options; files named by flags are read
// here, with errors naming the flag and the file.
func (f *selectionFlags) options() (plan.Options, error) {
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
	if f.payload != "" {
		fsys, err := payloadFS(f.payload)
		if err != nil {
			return opts, err
		}
		opts.Payload = fsys
	}
	if f.featureGateManifest != "" {
		data, err := os.ReadFile(f.featureGateManifest)
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

// payloadFS opens a payload given on the command line: a directory.
func payloadFS(path string) (fs.FS, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, usageErrorf("--payload: %v", err)
	}
	if !st.IsDir() {
		return nil, usageErrorf("--payload %s: not a directory", path)
	}
	return os.DirFS(path), nil
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

package main

import (
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/profiles"
)

// checkNames returns a usage error (exit 2, as in every command) naming
// the flag when a selection flag names a profile, feature set, feature
// gate or capability that does not exist: the command line is wrong, not
// the payload. Planning would find the same, without the flag's name.
func (f *selectionFlags) checkNames(opts plan.Options) error {
	if f.profile != "" {
		if err := checkProfile("--profile", f.profile, opts.Profiles); err != nil {
			return err
		}
	}
	if err := checkFeatureSet("--feature-set", f.featureSet); err != nil {
		return err
	}
	if err := payload.OverrideFeatureGates(sets.New[string](), f.featureGates); err != nil {
		return usageErrorf("--feature-gates: %v", err)
	}
	if opts.Capabilities {
		if _, err := payload.Capabilities(f.baselineCapabilitySet, f.additionalCapabilities); err != nil {
			return usageErrorf("--baseline-capability-set/--additional-capabilities: %v", err)
		}
	}
	return nil
}

// checkProfile returns a usage error naming flag when set (nil: the
// built-in profiles) has no profile name.
func checkProfile(flag, name string, set *profiles.Set) error {
	if set == nil {
		var err error
		if set, err = profiles.Embedded(); err != nil {
			return err
		}
	}
	if _, err := set.Definition(name); err != nil {
		return usageErrorf("%s: %v", flag, err)
	}
	return nil
}

// checkFeatureSet returns a usage error naming flag for a feature set
// library-go does not know.
func checkFeatureSet(flag, name string) error {
	if _, err := payload.FeatureSetName(name); err != nil {
		return usageErrorf("%s: %v", flag, err)
	}
	return nil
}

package plan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/api/features"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/lib/plancache"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/profiles"
)

// Options say what to plan. The zero value plans the embedded payload for the
// default profile and feature set; see the field comments for each default.
type Options struct {
	// Payload is the payload root (manifests/ and release-manifests/).
	// Nil: the embedded reference payload.
	Payload fs.FS
	// Loaded, when set, is used instead of loading Payload again (for
	// planning several selections of one payload).
	Loaded *payload.Payload
	// Cache, when set, shares work between plans of Loaded (see Cache).
	Cache *Cache
	// ReleaseImage is {{.ReleaseImage}} for manifests/ templates.
	ReleaseImage string

	// Profiles are the known profiles. Nil: the embedded ones.
	Profiles *profiles.Set
	// Profile names the profile in effect (--profile). Empty: the one
	// ClusterProfileData names, else profiles.Default.
	Profile string
	// ClusterProfileData is the data of the cluster's
	// openshift-config/cluster-profile ConfigMap, when a cluster is given
	// and has one (see profiles.Set.Resolve). Nil: no cluster.
	ClusterProfileData map[string]string

	// ExtraOverlays are overlay directories searched after the embedded
	// overlays (--overlays-dir).
	ExtraOverlays []overlay.Source
	// SkipOverlays turns the overlay stage off (for measuring it).
	SkipOverlays bool
	// Lean loads the payload for this one selection only (see
	// payload.LoadOptions.Only): the objects it excludes keep only their
	// metadata, which about halves the memory a release payload takes. The
	// Plan's Payload then serves no other selection. Ignored with Loaded.
	Lean bool
	// KeepWhole, with Lean, keeps whole the manifests it reports though
	// the selection excludes them (payload.LoadOptions.KeepWhole).
	KeepWhole func(*manifest.Manifest) bool
	// Parsed, when set, keeps the payload's parsed files between runs (see
	// payload.LoadOptions.Parsed): a cached release is not parsed again.
	Parsed payload.ParseCache
	// PlanCache, when set and Parsed is nil, keeps the parse of the
	// payload between runs, keyed by the payload's content (every file
	// Load reads, hashed: payload.Fingerprint), the binary and the parse
	// limits: planning the same bytes again decodes instead of parsing,
	// whatever the selection. The selection, profiles, overlays, extra
	// manifests and hooks are applied to it on every Build, so nothing
	// else can be stale. Plan.Cache says what it did.
	PlanCache *plancache.Store
	// Preload, when set (StartPreload), has fingerprinted the payload and
	// opened its PlanCache entry ahead of the Build, or is doing it.
	Preload *Preload

	// FeatureSet is the feature set ("" is Default).
	FeatureSet string
	// FeatureGates are explicit gates, "Gate" to enable and "-Gate" to
	// disable. For CustomNoUpgrade they are exactly the enabled gates;
	// otherwise they override openshift/api's defaults.
	FeatureGates []string
	// FeatureGate, when set, is a FeatureGate object whose status lists the
	// enabled gates for the release version; its spec.featureSet is used when
	// FeatureSet is empty. FeatureGates still apply on top.
	FeatureGate *configv1.FeatureGate

	// Capabilities turns on the capability filter with BaselineCapabilitySet
	// (empty: vCurrent) and AdditionalCapabilities. Off: no capability filter,
	// as `cluster-version-operator render` does.
	Capabilities           bool
	BaselineCapabilitySet  string
	AdditionalCapabilities []string

	// ExcludeID excludes manifests annotated exclude.release.openshift.io/<id>: "true".
	ExcludeID string
	// Overrides are the cluster's ClusterVersion spec.overrides: an object
	// one marks unmanaged is excluded, as the CVO excludes it (library-go
	// Include; Plan.Unmanaged lists them). Nil: those of ClusterConfig's
	// ClusterVersion, if any.
	Overrides []configv1.ComponentOverride

	// ClusterConfig holds the cluster facts from --cluster-config; nil: the
	// profile's defaults. Its cluster-profile ConfigMap names the profile
	// when Profile is empty, and its FeatureGate stands in for FeatureGate
	// when that is nil.
	ClusterConfig *component.ClusterConfig
	// ExtraManifests is a directory of admin manifests (--extra-manifests),
	// or nil. They are not filtered by inclusion annotations.
	ExtraManifests fs.FS
	// Components configure the payload's components (the hooks of
	// DefaultHooks) when Hooks is nil.
	Components Components
	// Hooks are the component render hooks, run in order. Nil:
	// DefaultHooks(Components).
	Hooks []component.Hook

	// TemplateLimits bound the work of each manifests/ template (zero
	// fields: payload.DefaultTemplateLimits).
	TemplateLimits payload.TemplateLimits
	// OnPhase, when set, is told as each phase of the pipeline starts
	// (for progress and logs); it is called from the goroutine of Build
	// or Validate.
	OnPhase func(Phase)
}

// Plan is the outcome of Build.
type Plan struct {
	// Payload is the loaded payload, templated for Profile.
	Payload *payload.Payload
	// Profile is the profile in effect and ProfileChain its names, nearest first.
	Profile      string
	ProfileChain []string
	// ProfileSource says where Profile was named.
	ProfileSource profiles.Source
	// ClusterProfile is the profile in effect, merged with its ancestors.
	ClusterProfile *profiles.Profile
	// FeatureSet is the feature set in effect.
	FeatureSet configv1.FeatureSet
	// FeatureGates are the enabled gates.
	FeatureGates sets.Set[string]
	// Selector is the inclusion filter that was applied.
	Selector *manifest.Selector
	// Selection holds every manifest with its decision.
	Selection *payload.Selection
	// Overlays are the overlays applied, root profile's first, and
	// OverlayChanges what they did.
	Overlays       []*overlay.Overlay
	OverlayChanges []overlay.Change
	// Generated are the objects the tool adds itself: the
	// openshift-config/cluster-profile ConfigMap.
	Generated []*manifest.Manifest
	// Extra are the admin's extra manifests as loaded.
	Extra []*manifest.Manifest
	// Cluster are the cluster facts the components saw.
	Cluster *component.ClusterConfig
	// Objects are the objects to apply, in apply order: the included
	// objects after the overlays, Generated, the extra manifests, and what
	// the component hooks added, less what they removed.
	Objects []*manifest.Manifest
	// Graph is the task graph over Objects and Steps: each step is a task
	// (Task.Step, a component.Step) at the place its File names, after
	// the objects its After names.
	Graph *payload.TaskGraph
	// Steps are the components' apply-time steps, as the hooks returned
	// them; Graph places them.
	Steps []component.StepSpec
	// Findings are warnings met on the way (never errors).
	Findings []manifest.Finding
	// PlanCache says what Options.PlanCache did (nil: not used).
	PlanCache *CacheUse

	cache *Cache // Options.Cache
	// store is Options.PlanCache: Check keeps its findings there.
	store *plancache.Store

	digestOnce sync.Once
	digests    ObjectDigests

	// checked holds Check's findings once it ran to the end: a plan
	// applied again (the operator's passes) is not checked again.
	checkMu sync.Mutex
	checked []manifest.Finding
	isDone  bool
	// checkHit: Check's findings came from the store.
	checkHit bool
}

// Build runs the pipeline: select, the profile chain's overlays, the
// cluster-profile ConfigMap, the extra manifests, the component hooks
// (which see ctx), the duplicate check and the graph. Errors name the file
// and document where there is one; several problems are joined.
func Build(ctx context.Context, opts Options) (*Plan, error) {
	pl, err := build(ctx, opts)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, interrupted(err, ctxErr)
	}
	return pl, err
}

// interrupted is the error of a Build or Validate that ctx stopped: ctx's
// error, with the phase it stopped (when err says) in front.
func interrupted(err, ctxErr error) error {
	if err != nil && errors.Is(err, ctxErr) {
		return err
	}
	return fmt.Errorf("planning: %w", ctxErr)
}

func build(ctx context.Context, opts Options) (*Plan, error) {
	r, err := resolve(ctx, opts)
	if err != nil {
		return nil, err
	}
	phase(ctx, opts, PhaseSelect)
	selection, err := r.payload.Select(r.selector)
	if err != nil {
		return nil, err
	}
	pl := &Plan{
		Payload:        r.payload,
		Profile:        r.profile,
		ProfileChain:   r.chain,
		ProfileSource:  r.source,
		ClusterProfile: r.merged,
		FeatureSet:     r.featureSet,
		FeatureGates:   r.selector.FeatureGates,
		Selector:       r.selector,
		Selection:      selection,
		Findings:       append([]manifest.Finding(nil), r.payload.Findings...),
		PlanCache:      r.cacheUse,
		cache:          opts.Cache,
		store:          opts.PlanCache,
	}
	objs := selection.Included
	if !opts.SkipOverlays {
		if pl.Overlays, err = findOverlays(r.merged, overlaySources(opts)); err != nil {
			return nil, err
		}
		phase(ctx, opts, PhaseOverlay)
		res, err := applyOverlays(ctx, opts.Cache.overlayCache(), objs, pl.Overlays)
		if err != nil {
			return nil, err
		}
		objs, pl.OverlayChanges = res.Objects, res.Changes
	}
	cm, err := clusterProfileConfigMap(r.merged, objs)
	if err != nil {
		return nil, err
	}
	pl.Generated = []*manifest.Manifest{cm}
	objs = append(objs[:len(objs):len(objs)], cm)

	if opts.ExtraManifests != nil {
		phase(ctx, opts, PhaseExtra)
		if pl.Extra, err = LoadExtraManifests(ctx, opts.ExtraManifests); err != nil {
			return nil, err
		}
	}
	pl.Cluster = opts.ClusterConfig
	if pl.Cluster == nil {
		pl.Cluster = defaultClusterConfig(r.merged)
	}
	hooks := opts.Hooks
	if hooks == nil {
		hooks = DefaultHooks(opts.Components)
	}
	version := ""
	if r.payload.Release != nil {
		version = r.payload.Release.Version
	}
	in := &component.Input{
		Objects:            objs,
		Extra:              pl.Extra,
		Cluster:            pl.Cluster,
		ProfileChain:       r.chain,
		HostedControlPlane: r.merged.HyperShift,
		FeatureSet:         FeatureSetLabel(r.featureSet),
		FeatureGates:       r.selector.FeatureGates,
		ReleaseVersion:     version,
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	phase(ctx, opts, PhaseComponents)
	final, findings, steps, err := runHooks(ctx, hooks, in)
	if err != nil {
		return nil, err
	}
	pl.Findings = append(pl.Findings, findings...)
	pl.Steps = steps
	if err := payload.CheckDuplicates(final); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	phase(ctx, opts, PhaseGraph)
	if pl.Graph, err = payload.NewTaskGraph(final, payload.GraphOptions{Steps: stepPlacements(steps)}); err != nil {
		return nil, err
	}
	pl.Objects = make([]*manifest.Manifest, 0, len(final))
	for _, t := range pl.Graph.Tasks {
		if t.Manifest != nil {
			pl.Objects = append(pl.Objects, t.Manifest)
		}
	}
	return pl, nil
}

// stepPlacements places the components' steps in the task graph; the
// component.Step is the graph's payload.Step, so the apply engine gets it
// back from Task.Step.
func stepPlacements(steps []component.StepSpec) []payload.StepPlacement {
	out := make([]payload.StepPlacement, len(steps))
	for i, s := range steps {
		out[i] = payload.StepPlacement{Step: s.Step, File: s.File, After: s.After}
	}
	return out
}

// resolved is Options turned into the things selection needs.
type resolved struct {
	profiles   *profiles.Set
	profile    string
	source     profiles.Source
	merged     *profiles.Profile
	chain      []string
	payload    *payload.Payload
	featureSet configv1.FeatureSet
	selector   *manifest.Selector
	cacheUse   *CacheUse
}

func resolve(ctx context.Context, opts Options) (*resolved, error) {
	set := opts.Profiles
	if set == nil {
		var err error
		if set, err = opts.Cache.embeddedProfiles(); err != nil {
			return nil, err
		}
	}
	clusterProfile := opts.ClusterProfileData
	if clusterProfile == nil && opts.ClusterConfig != nil && opts.ClusterConfig.Profile != "" {
		// The cluster-profile ConfigMap of --cluster-config.
		clusterProfile = map[string]string{"profile": opts.ClusterConfig.Profile}
	}
	profile, source, err := set.Resolve(opts.Profile, clusterProfile)
	if err != nil {
		return nil, err
	}
	merged, err := set.Profile(profile)
	if err != nil {
		return nil, err
	}
	chain, gateProfile := merged.Chain, merged.FeatureGateProfile.ClusterProfileName()

	p := opts.Loaded
	var cacheUse *CacheUse
	if p == nil {
		fsys := payloadFS(opts.Payload)
		lopts := payload.LoadOptions{ReleaseImage: opts.ReleaseImage, ClusterProfile: profile, Parsed: opts.Parsed}
		if opts.Lean {
			// The selection needs only the release's version; when it
			// cannot be made before loading, load everything, and the
			// errors come in their usual order.
			if rel, err := payload.ReadRelease(fsys); err == nil {
				if _, sel, err := selector(opts, chain, gateProfile, rel); err == nil {
					lopts.Only, lopts.KeepWhole = sel, opts.KeepWhole
				}
			}
		}
		lopts.Template, lopts.OnStage = opts.TemplateLimits, onStage(ctx, opts)
		phase(ctx, opts, PhaseLoad)
		var pc *planCache
		if opts.PlanCache != nil && opts.Parsed == nil {
			if pc, cacheUse, err = openPlanCache(ctx, opts.PlanCache, fsys, &lopts, opts.Preload); err != nil {
				return nil, err
			}
		}
		if p, err = payload.Load(ctx, fsys, lopts); err != nil {
			return nil, err
		}
		if pc != nil {
			pc.save(cacheUse)
		}
	} else if p, err = opts.Cache.withProfile(ctx, p, profile); err != nil {
		return nil, err
	}
	featureSet, sel, err := selector(opts, chain, gateProfile, p.Release)
	if err != nil {
		return nil, err
	}
	return &resolved{profiles: set, profile: profile, source: source, merged: merged, chain: chain, payload: p, featureSet: featureSet, selector: sel, cacheUse: cacheUse}, nil
}

// selector makes the inclusion filter of opts for a profile chain and its
// feature-gate profile, and a release (nil: none). It returns the feature
// set in effect too.
func selector(opts Options, chain []string, gateProfile features.ClusterProfileName, release *payload.Release) (configv1.FeatureSet, *manifest.Selector, error) {
	var err error
	featureSetName := opts.FeatureSet
	var fgGates sets.Set[string]
	if opts.FeatureGate == nil && opts.ClusterConfig != nil && opts.ClusterConfig.FeatureGate != nil {
		opts.FeatureGate = opts.ClusterConfig.FeatureGate
	}
	if opts.FeatureGate != nil {
		version := ""
		if release != nil {
			version = release.Version
		}
		var fgSet configv1.FeatureSet
		if fgSet, fgGates, err = payload.GatesFromFeatureGate(opts.FeatureGate, version); err != nil {
			return "", nil, err
		}
		if featureSetName == "" {
			featureSetName = string(fgSet)
		}
	}
	featureSet, err := payload.FeatureSetName(featureSetName)
	if err != nil {
		return "", nil, err
	}
	major := uint64(4)
	if mv := release.MajorVersion(); mv != nil {
		major = *mv
	}
	var gates sets.Set[string]
	if fgGates != nil {
		// The FeatureGate object's list, with explicit gates on top.
		gates = fgGates
		if err := payload.OverrideFeatureGates(gates, opts.FeatureGates); err != nil {
			return "", nil, err
		}
	} else if gates, err = payload.EnabledFeatureGates(major, gateProfile, featureSet, opts.FeatureGates); err != nil {
		return "", nil, err
	}

	annotationSet := FeatureSetLabel(featureSet)
	sel := &manifest.Selector{
		Profiles:     chain,
		FeatureSet:   &annotationSet,
		FeatureGates: gates,
		MajorVersion: release.MajorVersion(),
	}
	if opts.ExcludeID != "" {
		id := opts.ExcludeID
		sel.ExcludeID = &id
	}
	sel.Overrides = opts.Overrides
	if sel.Overrides == nil && opts.ClusterConfig != nil && opts.ClusterConfig.ClusterVersion != nil {
		sel.Overrides = opts.ClusterConfig.ClusterVersion.Spec.Overrides
	}
	if opts.Capabilities {
		caps, err := payload.Capabilities(opts.BaselineCapabilitySet, opts.AdditionalCapabilities)
		if err != nil {
			return "", nil, err
		}
		sel.Capabilities = caps
	}
	return featureSet, sel, nil
}

// FeatureSetLabel prints a feature set the way the annotation spells it
// ("Default" for the empty set).
func FeatureSetLabel(s configv1.FeatureSet) string {
	if s == "" {
		return "Default"
	}
	return string(s)
}

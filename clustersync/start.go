package clustersync

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	configv1 "github.com/openshift/api/config/v1"

	"k8s.io/client-go/rest"

	"github.com/payload-apply/payload-apply/lib/clusterversion"
	"github.com/payload-apply/payload-apply/lib/redact"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

// StartOptions say how Start connects and what it plans.
type StartOptions struct {
	// Connect are the connection's options; its Secrets also get the
	// values of the plan's Secrets.
	Connect ConnectOptions
	// Plan is what to plan. When Plan.Profile is empty and
	// Plan.ClusterConfig names no profile, the cluster's
	// openshift-config/cluster-profile ConfigMap names it (else the
	// default profile), as apply, diff and status choose it. When it
	// turns no capability filter on and the cluster's record lists
	// enabled capabilities, the plan includes what those enable (enabled
	// capabilities never become disabled).
	Plan plan.Options
	// Payload, when set and Plan names no payload (Payload and Loaded
	// nil), says which payload to plan from the cluster's record (nil
	// when the cluster has none): the release the cluster runs, for a
	// command that compares the cluster with it. Its error is Start's.
	Payload func(ctx context.Context, record *configv1.ClusterVersion) (fs.FS, error)
}

// Session is a cluster, its record and the plan built for it.
type Session struct {
	Cluster *Cluster
	Plan    *plan.Plan
	// Record is the cluster's ClusterVersion "version" as Start read it,
	// nil when it has none.
	Record *configv1.ClusterVersion
	// CapabilitiesSpec is the capabilities spec the plan's options ask
	// for (a record made for this session gets it), nil when they turn
	// no capability filter on.
	CapabilitiesSpec *configv1.ClusterVersionCapabilitiesSpec
}

// Start is what every command that talks to a cluster does first: connect
// (Connect: the server is checked), then NewSession. Errors say which of
// these failed.
func Start(ctx context.Context, cfg *rest.Config, opts StartOptions) (*Session, error) {
	if opts.Plan.Preload == nil {
		// The payload's fingerprint and cache entry while connecting and
		// reading the profile and the record, which the rest of
		// planning needs. No digest: a caller that records the payload
		// (apply) starts its own preload with it.
		opts.Plan = plan.StartPreload(ctx, opts.Plan, false)
	}
	c, err := Connect(ctx, cfg, opts.Connect)
	if err != nil {
		return nil, err
	}
	return NewSession(ctx, c, opts)
}

// NewSession is Start for a cluster already connected: it reads the
// cluster's record and profile, builds the plan and registers the plan's
// Secret values as secrets (opts.Connect.Secrets). A caller that keeps a
// Cluster (the operator) plans each release it applies with it, keeping
// the Cluster's discovery and request counts.
func NewSession(ctx context.Context, c *Cluster, opts StartOptions) (*Session, error) {
	// The record is read while the profile is: neither needs the other.
	type read struct {
		rec *configv1.ClusterVersion
		err error
	}
	recCtx, cancelRec := context.WithCancel(ctx)
	defer cancelRec()
	recRead := make(chan read, 1)
	go func() {
		rec, err := ReadRecord(recCtx, c)
		recRead <- read{rec, err}
	}()
	popts, err := clusterProfile(ctx, c, opts.Plan)
	if err != nil {
		return nil, err
	}
	r := <-recRead
	rec, err := r.rec, r.err
	if err != nil && (opts.Payload != nil || !CredentialsError(err)) {
		return nil, ExplainConnection(err)
	}
	if err != nil {
		// The payload is given: the record only adds what it knows.
		newSerial(opts.Connect.Sink).emit(Warning{Text: fmt.Sprintf("the cluster's record cannot be read, so it is left out: %v", err)})
		rec = nil
	}
	if popts, err = clusterCapabilities(rec, popts); err != nil {
		return nil, err
	}
	if opts.Payload != nil && popts.Payload == nil && popts.Loaded == nil {
		if popts.Payload, err = opts.Payload(ctx, rec); err != nil {
			return nil, err
		}
	}
	if popts.Lean && popts.KeepWhole == nil {
		// The record needs the payload's ClusterVersion CRD whatever the
		// selection (recordCRD).
		popts.KeepWhole = isRecordCRD
	}
	p, err := plan.Build(ctx, popts)
	if err != nil {
		return nil, err
	}
	if opts.Connect.Secrets != nil {
		AddPlanSecrets(opts.Connect.Secrets, p)
	}
	return &Session{Cluster: c, Plan: p, Record: rec, CapabilitiesSpec: capabilitiesSpec(opts.Plan)}, nil
}

// clusterPlanOptions completes plan options with what the cluster says:
// the profile its ConfigMap names (when the options name none) and the
// capabilities its record enables (clusterCapabilities).
func clusterPlanOptions(ctx context.Context, c *Cluster, rec *configv1.ClusterVersion, popts plan.Options) (plan.Options, error) {
	popts, err := clusterProfile(ctx, c, popts)
	if err != nil {
		return popts, err
	}
	return clusterCapabilities(rec, popts)
}

// clusterProfile names the profile of plan options from the cluster's
// ConfigMap when they name none.
func clusterProfile(ctx context.Context, c *Cluster, popts plan.Options) (plan.Options, error) {
	if popts.Profile == "" && (popts.ClusterConfig == nil || popts.ClusterConfig.Profile == "") {
		data, err := c.ClusterProfile(ctx)
		if err != nil {
			return popts, ExplainConnection(fmt.Errorf("reading the cluster's profile: %w", err))
		}
		popts.ClusterProfileData = data
	}
	return popts, nil
}

// clusterCapabilities turns the capability filter of plan options on with
// the capabilities the record enables (enabled capabilities never become
// disabled), those the options ask for added; and excludes what the
// record's spec.overrides mark unmanaged, unless the options name
// overrides of their own.
func clusterCapabilities(rec *configv1.ClusterVersion, popts plan.Options) (plan.Options, error) {
	if rec != nil && popts.Overrides == nil {
		popts.Overrides = rec.Spec.Overrides
	}
	if rec == nil || len(rec.Status.Capabilities.EnabledCapabilities) == 0 {
		return popts, nil
	}
	enabled := clusterversion.FromRecord(rec.Spec.Capabilities, rec.Status.Capabilities).Enabled
	if popts.Capabilities {
		asked, err := payload.Capabilities(popts.BaselineCapabilitySet, popts.AdditionalCapabilities)
		if err != nil {
			return popts, err
		}
		enabled = append(enabled, asked.EnabledCapabilities...)
	}
	popts.Capabilities, popts.BaselineCapabilitySet = true, string(configv1.ClusterVersionCapabilitySetNone)
	popts.AdditionalCapabilities = nil
	for _, e := range clusterversion.FromRecord(&configv1.ClusterVersionCapabilitiesSpec{BaselineCapabilitySet: configv1.ClusterVersionCapabilitySetNone,
		AdditionalEnabledCapabilities: enabled}, configv1.ClusterVersionCapabilitiesStatus{}).Enabled {
		popts.AdditionalCapabilities = append(popts.AdditionalCapabilities, string(e))
	}
	return popts, nil
}

// capabilitiesSpec is spec.capabilities of plan options that turn the
// capability filter on, else nil.
func capabilitiesSpec(popts plan.Options) *configv1.ClusterVersionCapabilitiesSpec {
	if !popts.Capabilities {
		return nil
	}
	spec := &configv1.ClusterVersionCapabilitiesSpec{BaselineCapabilitySet: configv1.ClusterVersionCapabilitySet(popts.BaselineCapabilitySet)}
	if spec.BaselineCapabilitySet == "" {
		spec.BaselineCapabilitySet = configv1.ClusterVersionCapabilitySetCurrent
	}
	for _, a := range popts.AdditionalCapabilities {
		spec.AdditionalEnabledCapabilities = append(spec.AdditionalEnabledCapabilities, configv1.ClusterVersionCapability(a))
	}
	return spec
}

// AddCredentials adds the secrets of a client configuration to v: the
// bearer token (and the token file's content), password and client key.
func AddCredentials(v *redact.Values, cfg *rest.Config) {
	v.Add(cfg.BearerToken, cfg.Password, string(cfg.KeyData))
	for _, f := range []string{cfg.BearerTokenFile, cfg.KeyFile} {
		if f == "" {
			continue
		}
		if b, err := os.ReadFile(f); err == nil {
			v.Add(string(b))
		}
	}
}

// AddPlanSecrets adds the data and stringData values of the plan's
// Secrets to v, those inside Lists too.
func AddPlanSecrets(v *redact.Values, p *plan.Plan) {
	for _, m := range p.Objects {
		// A Secret, or a List holding Secrets.
		v.AddSecret(m.Obj.Object)
	}
}

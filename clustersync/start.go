package clustersync

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/rest"

	"github.com/payload-apply/payload-apply/lib/redact"
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
	// default profile), as apply, diff and status choose it.
	Plan plan.Options
}

// Session is a cluster and the plan built for it.
type Session struct {
	Cluster *Cluster
	Plan    *plan.Plan
}

// Start is what every command that talks to a cluster does first: connect
// (Connect: the server is checked), resolve the cluster's profile, build
// the plan and register the plan's Secret values as secrets. Errors say
// which of these failed.
func Start(ctx context.Context, cfg *rest.Config, opts StartOptions) (*Session, error) {
	c, err := Connect(ctx, cfg, opts.Connect)
	if err != nil {
		return nil, err
	}
	popts := opts.Plan
	if popts.Profile == "" && (popts.ClusterConfig == nil || popts.ClusterConfig.Profile == "") {
		data, err := c.ClusterProfile(ctx)
		if err != nil {
			return nil, ExplainConnection(fmt.Errorf("reading the cluster's profile: %w", err))
		}
		popts.ClusterProfileData = data
	}
	p, err := plan.Build(ctx, popts)
	if err != nil {
		return nil, err
	}
	if opts.Connect.Secrets != nil {
		AddPlanSecrets(opts.Connect.Secrets, p)
	}
	return &Session{Cluster: c, Plan: p}, nil
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
// Secrets to v.
func AddPlanSecrets(v *redact.Values, p *plan.Plan) {
	for _, m := range p.Objects {
		if m.GVK.Group == "" && m.GVK.Kind == "Secret" {
			v.AddSecret(m.Obj.Object)
		}
	}
}

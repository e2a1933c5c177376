package ingress

import (
	"context"
	"encoding/json"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// ingressID is the Ingress config the step writes the status of.
var ingressID = manifest.ID{Group: configv1.GroupName, Kind: "Ingress", Name: "cluster"}

// PlacementStep writes the Ingress config's status.defaultPlacement through
// the status subresource (status cannot be created with the object). It
// writes nothing when the status already holds the value.
type PlacementStep struct {
	Placement configv1.DefaultPlacement
}

var _ component.Step = (*PlacementStep)(nil)

// Name returns "ingress/default-placement".
func (s *PlacementStep) Name() string { return "ingress/default-placement" }

// Rules returns what Run needs: get Ingress/cluster and patch its status.
func (s *PlacementStep) Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"ingresses/status"}, Verbs: []string{"patch"}},
	}
}

// Run reads Ingress/cluster and merge-patches its status when it differs.
func (s *PlacementStep) Run(ctx context.Context, c *component.Cluster) error {
	client, err := c.Resource(configv1.GroupVersion.WithKind("Ingress"), "")
	if err != nil {
		return fmt.Errorf("%s: %w", ingressID.Ref(), err)
	}
	live, err := client.Get(ctx, "cluster", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%s: get: %w", ingressID.Ref(), err)
	}
	current, _, _ := unstructured.NestedString(live.Object, "status", "defaultPlacement")
	if current == string(s.Placement) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"defaultPlacement": string(s.Placement)}})
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: c.FieldManager, DryRun: c.DryRunOption()}
	if _, err := client.Patch(ctx, "cluster", types.MergePatchType, patch, opts, "status"); err != nil {
		return fmt.Errorf("%s: write status.defaultPlacement %s: %w", ingressID.Ref(), s.Placement, err)
	}
	return nil
}

package clustersync

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/upgrade"
)

// maxHeld bounds the objects named for one delete; the rest are counted.
const maxHeld = 1000

// held reads what each Namespace and CustomResourceDefinition p deletes
// holds on the cluster, as the namespace and garbage-collector
// controllers would delete it: every object in the Namespace (each
// namespaced resource the server serves and lists, events aside), every
// object of the CRD's kind. Objects are listed by their metadata, in pages;
// at most maxHeld are named per delete. Resources the server does not
// serve, or does not let this user list, are passed over.
func held(ctx context.Context, c *Cluster, p *plan.Plan) (upgrade.Held, error) {
	var deletes []*manifest.Manifest
	for _, m := range p.Objects {
		if m.IsDelete() && (m.GVK.Group == "" && m.GVK.Kind == "Namespace" || m.GVK.Group == "apiextensions.k8s.io" && m.GVK.Kind == "CustomResourceDefinition") {
			deletes = append(deletes, m)
		}
	}
	if len(deletes) == 0 {
		return nil, nil
	}
	// Listing every kind of a namespace meets deprecated ones: their
	// warnings concern nothing the payload does.
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler, cfg.WarningHandlerWithContext = rest.NoWarnings{}, nil
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("reading what the deletes take with them: discovery: %w", err)
	}
	type resource struct {
		gvr  schema.GroupVersionResource
		kind string
	}
	var namespaced []resource
	byKind := map[schema.GroupKind]resource{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			res := resource{gv.WithResource(r.Name), r.Kind}
			byKind[schema.GroupKind{Group: gv.Group, Kind: r.Kind}] = res
			if r.Namespaced && r.Name != "events" {
				namespaced = append(namespaced, res)
			}
		}
	}
	out := upgrade.Held{}
	for _, d := range deletes {
		var h upgrade.HeldObjects
		list := func(r resource, ns string) error {
			opts := metav1.ListOptions{Limit: 500}
			for {
				l, err := mc.Resource(r.gvr).Namespace(ns).List(ctx, opts)
				switch {
				case apierrors.IsNotFound(err), apierrors.IsForbidden(err), apierrors.IsMethodNotSupported(err):
					return nil
				case err != nil:
					return fmt.Errorf("reading what %s takes with it: list %s: %w", d.ID().Ref(), r.gvr.Resource, err)
				}
				for _, o := range l.Items {
					if len(h.IDs) < maxHeld {
						h.IDs = append(h.IDs, manifest.ID{Group: r.gvr.Group, Kind: r.kind, Namespace: o.Namespace, Name: o.Name})
					} else {
						h.More++
					}
				}
				if opts.Continue = l.Continue; opts.Continue == "" {
					return nil
				}
			}
		}
		if d.GVK.Kind == "Namespace" {
			for _, r := range namespaced {
				if err := list(r, d.Obj.GetName()); err != nil {
					return nil, err
				}
			}
		} else {
			group, _, _ := unstructured.NestedString(d.Obj.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(d.Obj.Object, "spec", "names", "kind")
			if r, ok := byKind[schema.GroupKind{Group: group, Kind: kind}]; ok {
				if err := list(r, ""); err != nil {
					return nil, err
				}
			}
		}
		out[d.ID()] = h
	}
	return out, nil
}

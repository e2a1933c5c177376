// Command play-operators plays the operators of a payload on a cluster
// where none runs (the test API server of hack/test-apiserver.sh has no
// kubelet, so no operator ever reports): it marks every ClusterOperator
// the payload's selection includes Available=True, Progressing=False,
// Degraded=False, at the versions its manifest lists, as soon as
// 'payload-apply apply' has created it. That is what 'apply --wait' waits
// for, so a demo of the README's 'apply --wait' completes.
//
// Usage (from the repository root, beside or before the apply):
//
//	go run ./hack/play-operators --kubeconfig K [--payload DIR] [--profile P] [--feature-set S] [--timeout 15m] &
//	go run ./cmd/payload-apply apply --kubeconfig K --wait --timeout 10m
//
// It takes the same --payload, --profile and --feature-set as apply (the
// defaults are the same: the built-in payload, the default profile and
// feature set), polls the cluster every second, writes each
// ClusterOperator's status once it exists and is not already so, and
// exits 0 when every one is Available at its versions, or 1 at --timeout.
// ClusterOperators whose status a component step of the payload writes
// (the platform operators' aggregate one) are left to that step. It never
// touches anything but ClusterOperators' status; it is for demos and
// tests, never for a real cluster.
//
// May import: lib/component, lib/manifest, lib/resourceapply, plan.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/plan"
)

var clusterOperators = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusteroperators"}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig (default, as kubectl: $KUBECONFIG, else ~/.kube/config)")
	payloadDir := flag.String("payload", "", "payload directory (default: the payload built into payload-apply)")
	profile := flag.String("profile", "", "cluster profile (default: the default profile)")
	featureSet := flag.String("feature-set", "", "feature set (default: Default)")
	timeout := flag.Duration("timeout", 15*time.Minute, "give up after this long")
	interval := flag.Duration("interval", time.Second, "pause between two polls")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := play(ctx, *kubeconfig, *payloadDir, *profile, *featureSet, *interval); err != nil {
		fmt.Fprintln(os.Stderr, "play-operators:", err)
		os.Exit(1)
	}
}

// operator is a ClusterOperator of the payload to play.
type operator struct {
	required *unstructured.Unstructured
	played   bool
}

func play(ctx context.Context, kubeconfig, payloadDir, profile, featureSet string, interval time.Duration) error {
	opts := plan.Options{Profile: profile, FeatureSet: featureSet, Lean: true}
	if payloadDir != "" {
		opts.Payload = os.DirFS(payloadDir)
	}
	p, err := plan.Build(ctx, opts)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	owned := map[manifest.ID]bool{}
	for _, s := range p.Steps {
		if r, ok := s.Step.(component.Repeating); ok {
			for _, id := range r.Owns() {
				owned[id] = true
			}
		}
	}
	ops := map[string]*operator{}
	for _, m := range p.Objects {
		if m.GVK.Group == clusterOperators.Group && m.GVK.Kind == "ClusterOperator" && !owned[m.ID()] && !m.IsDelete() {
			ops[m.Obj.GetName()] = &operator{required: m.Obj}
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "play-operators: playing %d ClusterOperators of %s\n", len(ops), cfg.Host)
	co := client.Resource(clusterOperators)
	for {
		left, err := round(ctx, co, ops)
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "play-operators:", err)
		}
		if left == 0 {
			fmt.Fprintln(os.Stderr, "play-operators: every ClusterOperator is Available at its versions")
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d ClusterOperators not played: %w", left, context.Cause(ctx))
		case <-time.After(interval):
		}
	}
}

// round plays every operator that exists and is not ready; it returns how
// many are not played yet.
func round(ctx context.Context, co dynamic.NamespaceableResourceInterface, ops map[string]*operator) (int, error) {
	list, err := co.List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		// The ClusterOperator CRD is not there yet: apply has not begun.
		return len(ops), nil
	}
	if err != nil {
		return len(ops), fmt.Errorf("list ClusterOperators: %w", err)
	}
	live := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		live[list.Items[i].GetName()] = &list.Items[i]
	}
	names := make([]string, 0, len(ops))
	for name := range ops {
		names = append(names, name)
	}
	sort.Strings(names)
	left := 0
	var errs []error
	for _, name := range names {
		op := ops[name]
		obj := live[name]
		switch {
		case op.played:
			continue
		case obj == nil:
			left++
			continue
		case resourceapply.Check(op.required, obj).Ready:
			op.played = true
			continue
		}
		if err := setStatus(ctx, co, obj, op.required); err != nil {
			errs = append(errs, fmt.Errorf("ClusterOperator %s: %w", name, err))
			left++
			continue
		}
		op.played = true
		fmt.Fprintf(os.Stderr, "play-operators: ClusterOperator %s: Available\n", name)
	}
	return left, errors.Join(errs...)
}

// setStatus writes live's status: Available, not Progressing, not
// Degraded, at the versions required lists.
func setStatus(ctx context.Context, co dynamic.NamespaceableResourceInterface, live, required *unstructured.Unstructured) error {
	now := time.Now().UTC().Format(time.RFC3339)
	cond := func(t, status string) any {
		return map[string]any{"type": t, "status": status, "reason": "AsExpected", "message": "played by hack/play-operators", "lastTransitionTime": now}
	}
	obj := live.DeepCopy()
	versions, _, _ := unstructured.NestedSlice(required.Object, "status", "versions")
	status := map[string]any{"conditions": []any{cond("Available", "True"), cond("Progressing", "False"), cond("Degraded", "False")}}
	if len(versions) > 0 {
		status["versions"] = versions
	}
	obj.Object["status"] = status
	_, err := co.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: "play-operators"})
	return err
}

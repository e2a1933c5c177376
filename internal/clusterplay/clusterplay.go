// Package clusterplay plays on a test API server what runs on a real
// cluster beside payload-apply: the operators, which report the versions
// of the release they are told (Available, not Degraded, Upgradeable as
// told), the Deployment controller, which rolls every Deployment out, and
// the CRDs and namespaces other operators define, which the real payload
// uses. The upgrade test and hack/upgradebench use it.
//
// May import: plan.
package clusterplay

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/plan"
)

var (
	clusterOperators = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusteroperators"}
	deployments      = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// Player plays the operators and the Deployment controller: every
// ClusterOperator reports the versions of the release it is told
// (Available, not Degraded, Progressing False), unless held at the
// versions it has, and says Upgradeable as told; every Deployment is
// rolled out by the time the player next looks (every 100 ms). Its methods
// are safe for concurrent use; Stop ends it.
type Player struct {
	dc dynamic.Interface

	mu          sync.Mutex
	versions    map[string][]configv1.OperandVersion
	hold        map[string]bool
	upgradeable map[string]*configv1.ClusterOperatorStatusCondition
	stop        func()
	done        chan struct{}
}

// NewPlayer starts a Player on the cluster of dc.
func NewPlayer(dc dynamic.Interface) *Player {
	p := &Player{dc: dc, versions: map[string][]configv1.OperandVersion{}, hold: map[string]bool{},
		upgradeable: map[string]*configv1.ClusterOperatorStatusCondition{}, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	go func() {
		defer close(p.done)
		for ctx.Err() == nil {
			p.play(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return p
}

// Stop ends the player and waits until it has.
func (p *Player) Stop() {
	p.stop()
	<-p.done
}

// Release tells every operator the versions the ClusterOperator manifests
// of the payload directory dir list (the default profile's).
func (p *Player) Release(ctx context.Context, dir string) error {
	pl, err := plan.Build(ctx, plan.Options{Payload: os.DirFS(dir)})
	if err != nil {
		return err
	}
	versions := map[string][]configv1.OperandVersion{}
	for _, m := range pl.Objects {
		if m.GVK.Kind != "ClusterOperator" || m.IsDelete() {
			continue
		}
		var co configv1.ClusterOperator
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.Obj.Object, &co); err != nil {
			return fmt.Errorf("%s: %w", m.Position(), err)
		}
		versions[co.Name] = co.Status.Versions
	}
	p.mu.Lock()
	p.versions = versions
	p.mu.Unlock()
	return nil
}

// Hold keeps an operator at the versions it reports (true) or lets it
// go on (false).
func (p *Player) Hold(name string, hold bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold[name] = hold
}

// SetUpgradeable has an operator say Upgradeable=False with reason and
// message, or (reason "") Upgradeable=True.
func (p *Player) SetUpgradeable(name, reason, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if reason == "" {
		delete(p.upgradeable, name)
		return
	}
	p.upgradeable[name] = &configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse, Reason: reason, Message: message}
}

func (p *Player) play(ctx context.Context) {
	p.mu.Lock()
	versions, hold, up := p.versions, map[string]bool{}, map[string]*configv1.ClusterOperatorStatusCondition{}
	for k, v := range p.hold {
		hold[k] = v
	}
	for k, v := range p.upgradeable {
		up[k] = v
	}
	p.mu.Unlock()
	if list, err := p.dc.Resource(clusterOperators).List(ctx, metav1.ListOptions{}); err == nil {
		for i := range list.Items {
			p.playOperator(ctx, &list.Items[i], versions, hold, up)
		}
	}
	if list, err := p.dc.Resource(deployments).List(ctx, metav1.ListOptions{}); err == nil {
		for i := range list.Items {
			p.rollOut(ctx, &list.Items[i])
		}
	}
}

func (p *Player) playOperator(ctx context.Context, u *unstructured.Unstructured, versions map[string][]configv1.OperandVersion, hold map[string]bool, up map[string]*configv1.ClusterOperatorStatusCondition) {
	var co configv1.ClusterOperator
	if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &co) != nil {
		return
	}
	want := co.Status.DeepCopy()
	since := metav1.NewTime(time.Now().Truncate(time.Second))
	set := func(t configv1.ClusterStatusConditionType, s configv1.ConditionStatus, reason, msg string) {
		for i := range want.Conditions {
			if want.Conditions[i].Type == t {
				if want.Conditions[i].Status != s {
					want.Conditions[i].LastTransitionTime = since
				}
				want.Conditions[i].Status, want.Conditions[i].Reason, want.Conditions[i].Message = s, reason, msg
				return
			}
		}
		want.Conditions = append(want.Conditions, configv1.ClusterOperatorStatusCondition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: since})
	}
	set(configv1.OperatorAvailable, configv1.ConditionTrue, "AsExpected", "")
	set(configv1.OperatorDegraded, configv1.ConditionFalse, "AsExpected", "")
	set(configv1.OperatorProgressing, configv1.ConditionFalse, "AsExpected", "")
	if c := up[co.Name]; c != nil {
		set(configv1.OperatorUpgradeable, c.Status, c.Reason, c.Message)
	} else {
		set(configv1.OperatorUpgradeable, configv1.ConditionTrue, "AsExpected", "")
	}
	if v, ok := versions[co.Name]; ok && !hold[co.Name] {
		want.Versions = v
	}
	if equality.Semantic.DeepEqual(*want, co.Status) {
		return
	}
	co.Status = *want
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&co)
	if err != nil {
		return
	}
	_, _ = p.dc.Resource(clusterOperators).UpdateStatus(ctx, &unstructured.Unstructured{Object: obj}, metav1.UpdateOptions{})
}

// rollOut writes what the Deployment controller and its pods would, once
// the rollout of the newest generation is done.
func (p *Player) rollOut(ctx context.Context, u *unstructured.Unstructured) {
	replicas, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !ok {
		replicas = 1
	}
	gen := u.GetGeneration()
	if observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); observed == gen {
		return
	}
	now := time.Now().UTC().Format(time.RFC3339)
	status := map[string]any{
		"observedGeneration": gen, "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
		"conditions": []any{
			map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "lastUpdateTime": now, "lastTransitionTime": now},
			map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "lastUpdateTime": now, "lastTransitionTime": now},
		},
	}
	u = u.DeepCopy()
	u.Object["status"] = status
	_, _ = p.dc.Resource(deployments).Namespace(u.GetNamespace()).UpdateStatus(ctx, u, metav1.UpdateOptions{})
}

// Environment creates what a real cluster has beside the real payload and
// a test API server lacks: the CRDs of kinds other operators define
// (CredentialsRequest, StorageVersionMigration, ServiceMonitor,
// PrometheusRule), with open schemas, and the namespaces other operators
// create, so that the real payload installs completely. It waits until the
// CRDs are served.
func Environment(ctx context.Context, dc dynamic.Interface) error {
	for _, c := range []struct {
		group, kind, plural, version string
		namespaced                   bool
	}{
		{"cloudcredential.openshift.io", "CredentialsRequest", "credentialsrequests", "v1", true},
		{"migration.k8s.io", "StorageVersionMigration", "storageversionmigrations", "v1alpha1", false},
		{"monitoring.coreos.com", "ServiceMonitor", "servicemonitors", "v1", true},
		{"monitoring.coreos.com", "PrometheusRule", "prometheusrules", "v1", true},
	} {
		scope := "Cluster"
		if c.namespaced {
			scope = "Namespaced"
		}
		crd := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": c.plural + "." + c.group,
				// migration.k8s.io is a protected group.
				"annotations": map[string]any{"api-approved.kubernetes.io": "https://github.com/kubernetes/enhancements/pull/1111"}},
			"spec": map[string]any{"group": c.group, "scope": scope,
				"names": map[string]any{"kind": c.kind, "plural": c.plural, "listKind": c.kind + "List", "singular": strings.ToLower(c.kind)},
				"versions": []any{map[string]any{"name": c.version, "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}
		if err := create(ctx, dc.Resource(crds), crd); err != nil {
			return err
		}
	}
	for _, ns := range []string{"openshift", "openshift-cloud-credential-operator", "openshift-marketplace", "openshift-service-ca", "openshift-apiserver",
		"openshift-authentication", "openshift-kube-apiserver", "openshift-kube-controller-manager", "openshift-kube-scheduler", "openshift-oauth-apiserver"} {
		if err := create(ctx, dc.Resource(namespaces), map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil {
			return err
		}
	}
	for _, gvr := range []schema.GroupVersionResource{{Group: "cloudcredential.openshift.io", Version: "v1", Resource: "credentialsrequests"},
		{Group: "migration.k8s.io", Version: "v1alpha1", Resource: "storageversionmigrations"},
		{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}, {Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"}} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := dc.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s not served: %w", gvr, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

var (
	crds       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

func create(ctx context.Context, ri dynamic.ResourceInterface, obj map[string]any) error {
	if _, err := ri.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%s: %w", obj["kind"], err)
	}
	return nil
}

// CapabilitiesWithout is every capability of vCurrent but skip, comma
// separated, for --additional-capabilities with --baseline-capability-set
// None.
func CapabilitiesWithout(skip configv1.ClusterVersionCapability) string {
	var out []string
	for _, c := range configv1.ClusterVersionCapabilitySets[configv1.ClusterVersionCapabilitySetCurrent] {
		if c != skip {
			out = append(out, string(c))
		}
	}
	return strings.Join(out, ",")
}

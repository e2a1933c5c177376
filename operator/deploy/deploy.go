// Package deploy makes the objects that run `payload-apply operator` in a
// cluster: its Namespace, ServiceAccount, the ClusterRole and binding of
// what it applies (from lib/permissions and the operator's own rules), the
// Role and binding of its Lease, and a Deployment of two replicas that
// elect a leader, with probes and resource requests.
//
// Two shapes: the operator in the cluster it manages (everything in one
// cluster), and HyperShift's, where the Deployment runs in a management
// cluster with the managed cluster's kubeconfig from a Secret and its Lease
// beside it; the ClusterRole is then for the managed cluster, to be bound
// there to the kubeconfig's identity.
//
// May import: lib/quantity.
// Cluster I/O: none.
package deploy

import (
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/payload-apply/payload-apply/lib/quantity"
)

// Options say what Objects makes. Image, Rules and LeaseRules are
// required; DefaultOptions fills in the rest.
type Options struct {
	// Namespace holds the operator (and its Lease); Name names its
	// ServiceAccount, roles, bindings and Deployment.
	Namespace, Name string
	// Image is the operator's image: the static binary as Entrypoint
	// (`payload-apply operator image` builds it).
	Image string
	// Replicas run at once; one leads.
	Replicas int32
	// Args are the container's arguments, "operator" and its flags
	// (they replace the image's Cmd).
	Args []string
	// MetricsPort serves /metrics, /healthz and /readyz; the probes use it.
	MetricsPort int32
	// PayloadImage, when set, is an image mounted read-only at
	// PayloadMountPath (Kubernetes image volumes), holding the payload
	// the operator serves (pass --payload=PayloadMountPath in Args).
	PayloadImage string
	// KubeconfigSecret, when set, is a Secret in Namespace whose key
	// "kubeconfig" reaches the managed cluster, mounted at
	// KubeconfigMountPath (HyperShift's shape; pass --kubeconfig in Args).
	// The ClusterRole is then for the managed cluster, and no binding of
	// it is made here.
	KubeconfigSecret string
	// Rules are what the operator needs on the managed cluster,
	// LeaseRules what it needs in Namespace for its Lease.
	Rules, LeaseRules []rbacv1.PolicyRule
	// CPURequest and MemoryRequest are the container's requests (no
	// limits: the operator's memory follows the payload's size).
	CPURequest, MemoryRequest string
	// PriorityClassName keeps the operator scheduled under pressure, as
	// the CVO is (system-cluster-critical); empty: none.
	PriorityClassName string
}

// Paths in the container.
const (
	PayloadMountPath    = "/payload"
	KubeconfigMountPath = "/etc/payload-apply/managed-cluster"
	// KubeconfigKey is the Secret's key holding the kubeconfig.
	KubeconfigKey = "kubeconfig"
)

// DefaultOptions returns the defaults: namespace and name
// payload-apply-operator, two replicas, metrics on 9099 (the CVO's port),
// requests of 20m CPU (the CVO's) and 200Mi memory (a leader holding the
// real OpenShift payload: docs/benchmarks.md), priority
// system-cluster-critical.
func DefaultOptions() Options {
	return Options{
		Namespace:         "payload-apply-operator",
		Name:              "payload-apply-operator",
		Replicas:          2,
		MetricsPort:       9099,
		CPURequest:        "20m",
		MemoryRequest:     "200Mi",
		PriorityClassName: "system-cluster-critical",
	}
}

// Objects returns the objects, in the order they are applied: Namespace,
// ServiceAccount, ClusterRole, ClusterRoleBinding (not in HyperShift's
// shape), Role, RoleBinding, Deployment; as a user would write them: no
// status, no empty creationTimestamp.
func Objects(o Options) ([]*unstructured.Unstructured, error) {
	typed, err := o.objects()
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(typed))
	for i, obj := range typed {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("deploy: %w", err)
		}
		delete(m, "status")
		unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(m, "spec", "template", "metadata", "creationTimestamp")
		out[i] = &unstructured.Unstructured{Object: m}
	}
	return out, nil
}

func (o Options) objects() ([]runtime.Object, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	labels := map[string]string{"app.kubernetes.io/name": o.Name, "app.kubernetes.io/component": "operator", "app.kubernetes.io/part-of": "payload-apply"}
	meta := func(namespaced bool) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: o.Name, Labels: labels}
		if namespaced {
			m.Namespace = o.Namespace
		}
		return m
	}
	sa := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: o.Name, Namespace: o.Namespace}}
	out := []runtime.Object{
		&corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: o.Namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "payload-apply"}}},
		&corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: meta(true)},
		&rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: meta(false), Rules: o.Rules},
	}
	if o.KubeconfigSecret == "" {
		out = append(out, &rbacv1.ClusterRoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), ObjectMeta: meta(false),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: o.Name}, Subjects: sa})
	}
	out = append(out,
		&rbacv1.Role{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: meta(true), Rules: o.LeaseRules},
		&rbacv1.RoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: meta(true),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: o.Name}, Subjects: sa},
	)
	d, err := o.deployment(meta(true), labels)
	if err != nil {
		return nil, err
	}
	return append(out, d), nil
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func (o Options) validate() error {
	var errs []error
	if o.Namespace == "" || o.Name == "" {
		errs = append(errs, errors.New("deploy: the namespace and name are required"))
	}
	if o.Image == "" {
		errs = append(errs, errors.New("deploy: the operator's image is required"))
	}
	if o.Replicas < 1 {
		errs = append(errs, fmt.Errorf("deploy: replicas %d: want at least 1", o.Replicas))
	}
	if o.MetricsPort < 1 || o.MetricsPort > 65535 {
		errs = append(errs, fmt.Errorf("deploy: metrics port %d: want 1 to 65535", o.MetricsPort))
	}
	if len(o.Rules) == 0 || len(o.LeaseRules) == 0 {
		errs = append(errs, errors.New("deploy: the rules of the managed cluster and of the lease are required"))
	}
	for _, q := range []struct{ what, v string }{{"CPU request", o.CPURequest}, {"memory request", o.MemoryRequest}} {
		if _, err := quantity.Parse(q.v); err != nil {
			errs = append(errs, fmt.Errorf("deploy: %s %q: %w", q.what, q.v, err))
		}
	}
	return errors.Join(errs...)
}

// deployment is the operator's Deployment.
func (o Options) deployment(meta metav1.ObjectMeta, labels map[string]string) (*appsv1.Deployment, error) {
	port := intstr.FromString("metrics")
	probe := func(path string, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: port}},
			PeriodSeconds:    10,
			TimeoutSeconds:   5,
			FailureThreshold: failures,
		}
	}
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	c := corev1.Container{
		Name:  "operator",
		Image: o.Image,
		Args:  o.Args,
		// The replica's identity in the Lease and the Lease's namespace.
		Env:   []corev1.EnvVar{fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace")},
		Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: o.MetricsPort, Protocol: corev1.ProtocolTCP}},
		// Planning the payload takes a few seconds on a loaded node.
		StartupProbe:   &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: port}}, PeriodSeconds: 5, FailureThreshold: 24},
		LivenessProbe:  probe("/healthz", 3),
		ReadinessProbe: probe("/readyz", 3),
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(o.CPURequest),
			corev1.ResourceMemory: resource.MustParse(o.MemoryRequest),
		}},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr(false),
			ReadOnlyRootFilesystem:   ptr(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	var vols []corev1.Volume
	if o.PayloadImage != "" {
		vols = append(vols, corev1.Volume{Name: "payload", VolumeSource: corev1.VolumeSource{
			Image: &corev1.ImageVolumeSource{Reference: o.PayloadImage, PullPolicy: corev1.PullIfNotPresent}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "payload", MountPath: PayloadMountPath, ReadOnly: true})
	}
	if o.KubeconfigSecret != "" {
		vols = append(vols, corev1.Volume{Name: "managed-cluster", VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: o.KubeconfigSecret, Items: []corev1.KeyToPath{{Key: KubeconfigKey, Path: KubeconfigKey}}}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "managed-cluster", MountPath: KubeconfigMountPath, ReadOnly: true})
	}
	selector := map[string]string{"app.kubernetes.io/name": o.Name}
	maxUnavailable := intstr.FromInt32(1)
	maxSurge := intstr.FromInt32(0)
	spec := corev1.PodSpec{
		ServiceAccountName: o.Name,
		PriorityClassName:  o.PriorityClassName,
		Containers:         []corev1.Container{c},
		Volumes:            vols,
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		// A pass in flight gets its grace (10 s) before the Lease is
		// released.
		TerminationGracePeriodSeconds: ptr(int64(30)),
		// Replicas on different nodes, when there are several.
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100,
				PodAffinityTerm: corev1.PodAffinityTerm{
					LabelSelector: &metav1.LabelSelector{MatchLabels: selector},
					TopologyKey:   "kubernetes.io/hostname",
				},
			}},
		}},
	}
	d := &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(o.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			// One replica at a time, never more than Replicas: the
			// follower keeps the Lease warm while the other restarts.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &maxUnavailable, MaxSurge: &maxSurge}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					"kubectl.kubernetes.io/default-container": "operator",
				}},
				Spec: spec,
			},
		},
	}
	return d, nil
}

func ptr[T any](v T) *T { return &v }

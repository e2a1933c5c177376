package resourceapply

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The CVO's merge per kind (its lib/resourcemerge and, for every other
// kind, the generic merge of pkg/cvo/internal), as rules. What a rule does
// not name keeps its live value where the manifest is silent (the CVO
// leaves it, or merges it: labels, annotations, a ConfigMap's data, a
// pod's nodeSelector); what the manifest sets holds the manifest's value
// (server-side apply, forced). docs/apply.md has the table.

func fieldRules(m map[string]*rule) *rule { return &rule{fields: m} }
func ownWith(m map[string]*rule) *rule    { return &rule{own: true, fields: m} }
func dflt(v any) *rule                    { return &rule{drop: true, dflt: v} }

// keyed is a list whose elements match by key and whose elements the
// manifest lacks are removed.
func keyed(elem *rule, key ...string) *rule { return &rule{key: key, elem: elem} }

var (
	drop    = &rule{drop: true}
	keepSet = &rule{keep: true}

	// metaRule: labels and annotations merged (the manifest's keys win,
	// the others stay); owner references merged by uid.
	metaRule = fieldRules(map[string]*rule{"ownerReferences": {key: []string{"uid"}, keep: true, elem: ownRule}})

	probeRule = ownWith(map[string]*rule{
		"timeoutSeconds": dflt(1), "periodSeconds": dflt(10), "successThreshold": dflt(1), "failureThreshold": dflt(3),
		"httpGet": ownWith(map[string]*rule{"scheme": dflt("HTTP")}),
	})

	containerRule = fieldRules(map[string]*rule{
		"command": ownRule, "args": ownRule, "envFrom": ownRule,
		"env": {own: true, key: []string{"name"}, elem: ownWith(map[string]*rule{
			"valueFrom": ownWith(map[string]*rule{"fieldRef": ownWith(map[string]*rule{"apiVersion": dflt("v1")})}),
		})},
		"resources":     fieldRules(map[string]*rule{"limits": ownRule, "requests": ownRule}),
		"ports":         keyed(ownWith(map[string]*rule{"protocol": dflt("TCP")}), "name"),
		"volumeMounts":  keyed(ownRule, "mountPath"),
		"livenessProbe": probeRule, "readinessProbe": probeRule,
		"securityContext": {drop: true, fields: map[string]*rule{
			"capabilities":   {drop: true, fields: map[string]*rule{"add": keepSet, "drop": keepSet}},
			"seLinuxOptions": drop, "privileged": drop, "runAsUser": drop, "runAsNonRoot": drop,
			"readOnlyRootFilesystem": drop, "allowPrivilegeEscalation": drop, "seccompProfile": ownRule,
		}},
	})

	modeDefault = ownWith(map[string]*rule{"defaultMode": dflt(420)})
	volumeRule  = ownWith(map[string]*rule{
		"configMap": modeDefault, "secret": modeDefault, "downwardAPI": modeDefault,
		"emptyDir": {own: true, dflt: map[string]any{}},
		"hostPath": ownWith(map[string]*rule{"type": dflt("")}),
		"projected": ownWith(map[string]*rule{"defaultMode": dflt(420), "sources": {own: true, elem: ownWith(map[string]*rule{
			"serviceAccountToken": ownWith(map[string]*rule{"expirationSeconds": dflt(3600)}),
		})}}),
	})

	podSpecRule = fieldRules(map[string]*rule{
		"initContainers":               keyed(containerRule, "name"),
		"containers":                   keyed(containerRule, "name"),
		"volumes":                      keyed(volumeRule, "name"),
		"automountServiceAccountToken": drop, "hostNetwork": drop, "hostUsers": drop,
		"priority": drop, "shareProcessNamespace": drop,
		"dnsPolicy": dflt("ClusterFirst"), "terminationGracePeriodSeconds": dflt(30),
		"securityContext": {drop: true, dflt: map[string]any{}, fields: map[string]*rule{
			"seLinuxOptions": drop, "runAsUser": drop, "runAsGroup": drop, "runAsNonRoot": drop, "fsGroup": drop,
			"seccompProfile": ownRule, "supplementalGroups": keepSet,
			"sysctls": {key: []string{"name"}, keep: true, elem: ownRule},
		}},
		// Only when the manifest sets an affinity.
		"affinity":    fieldRules(map[string]*rule{"nodeAffinity": ownRule, "podAffinity": ownRule, "podAntiAffinity": ownRule}),
		"tolerations": keepSet,
	})
	podTemplateRule = fieldRules(map[string]*rule{"spec": podSpecRule})

	jobSpecRule = fieldRules(map[string]*rule{
		"parallelism": dflt(1), "completions": dflt(1), "activeDeadlineSeconds": drop, "backoffLimit": dflt(6),
		"manualSelector": drop, "ttlSecondsAfterFinished": drop, "suspend": dflt(false),
		"completionMode": dflt("NonIndexed"), "podFailurePolicy": ownRule, "template": podTemplateRule,
	})

	rollingDefault = map[string]any{"maxUnavailable": "25%", "maxSurge": "25%"}

	webhookRule = ownWith(map[string]*rule{
		"failurePolicy": dflt("Fail"), "matchPolicy": dflt("Equivalent"), "timeoutSeconds": dflt(10),
		"namespaceSelector": {own: true, dflt: map[string]any{}}, "objectSelector": {own: true, dflt: map[string]any{}},
		"rules": {own: true, elem: ownWith(map[string]*rule{"scope": dflt("*")})},
	})
)

// kindRules are the kinds the CVO merges field by field (its
// lib/resourcemerge); every other kind gets genericRule.
var kindRules = map[schema.GroupKind]*rule{
	{Kind: "Namespace"}: fieldRules(map[string]*rule{"metadata": metaRule}),
	{Kind: "ConfigMap"}: fieldRules(map[string]*rule{"metadata": metaRule}),
	{Kind: "ServiceAccount"}: fieldRules(map[string]*rule{"metadata": metaRule,
		"automountServiceAccountToken": drop}),
	{Kind: "Service"}: fieldRules(map[string]*rule{"metadata": metaRule, "spec": fieldRules(map[string]*rule{
		"ports":    keyed(ownWith(map[string]*rule{"protocol": dflt("TCP")}), "name"),
		"type":     dflt("ClusterIP"),
		"selector": ownRule,
	})}),
	{Group: "apps", Kind: "Deployment"}: fieldRules(map[string]*rule{"metadata": metaRule, "spec": fieldRules(map[string]*rule{
		"replicas": dflt(1), "paused": dflt(false), "minReadySeconds": dflt(0), "selector": ownRule,
		"strategy": {own: true, dflt: map[string]any{"type": "RollingUpdate", "rollingUpdate": rollingDefault}, fields: map[string]*rule{
			"type": dflt("RollingUpdate"), "rollingUpdate": {own: true, dflt: rollingDefault},
		}},
		"template": podTemplateRule,
	})}),
	{Group: "apps", Kind: "DaemonSet"}: fieldRules(map[string]*rule{"metadata": metaRule, "spec": fieldRules(map[string]*rule{
		"selector": ownRule, "template": podTemplateRule,
	})}),
	{Group: "batch", Kind: "Job"}: fieldRules(map[string]*rule{"metadata": metaRule, "spec": jobSpecRule}),
	{Group: "batch", Kind: "CronJob"}: fieldRules(map[string]*rule{"metadata": metaRule, "spec": fieldRules(map[string]*rule{
		"startingDeadlineSeconds": drop, "suspend": dflt(false), "successfulJobsHistoryLimit": dflt(3),
		"failedJobsHistoryLimit": dflt(1), "timeZone": drop, "concurrencyPolicy": dflt("Allow"),
		"jobTemplate": fieldRules(map[string]*rule{"spec": jobSpecRule}),
	})}),
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: fieldRules(map[string]*rule{"metadata": metaRule,
		"aggregationRule": ownRule, "rules": ownRule}),
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}: fieldRules(map[string]*rule{"metadata": metaRule,
		"rules": ownRule}),
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: fieldRules(map[string]*rule{"metadata": metaRule,
		"subjects": ownRule, "roleRef": ownRule}),
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: fieldRules(map[string]*rule{"metadata": metaRule,
		"subjects": ownRule, "roleRef": ownRule}),
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: fieldRules(map[string]*rule{"metadata": metaRule,
		"webhooks": {own: true, key: []string{"name"}, elem: webhookRule}}),
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: fieldRules(map[string]*rule{"metadata": metaRule,
		"spec": ownRule}),
	{Group: "security.openshift.io", Kind: "SecurityContextConstraints"}: fieldRules(map[string]*rule{"metadata": metaRule,
		"priority": drop, "allowPrivilegedContainer": drop, "allowHostDirVolumePlugin": drop,
		"allowHostNetwork": drop, "allowHostPorts": drop, "allowHostPID": drop, "allowHostIPC": drop,
		"defaultAllowPrivilegeEscalation": drop, "allowPrivilegeEscalation": dflt(true), "readOnlyRootFilesystem": drop,
		"defaultAddCapabilities": ownRule, "requiredDropCapabilities": ownRule, "allowedCapabilities": ownRule,
		"volumes": ownRule, "allowedFlexVolumes": ownRule, "seLinuxContext": ownRule, "runAsUser": ownRule,
		"fsGroup": ownRule, "supplementalGroups": ownRule, "users": ownRule, "groups": ownRule,
		"seccompProfiles": ownRule, "allowedUnsafeSysctls": ownRule, "forbiddenSysctls": ownRule}),
	{Group: "image.openshift.io", Kind: "ImageStream"}: fieldRules(map[string]*rule{"metadata": metaRule, "spec": fieldRules(map[string]*rule{
		"lookupPolicy": ownRule,
		"tags": {key: []string{"name"}, keep: true, elem: fieldRules(map[string]*rule{
			"importPolicy": ownWith(map[string]*rule{"importMode": dflt("Legacy")}), "from": ownRule,
		})},
	})}),
	{Group: "operators.coreos.com", Kind: "OperatorGroup"}: fieldRules(map[string]*rule{"metadata": metaRule, "spec": fieldRules(map[string]*rule{
		"selector": ownRule, "targetNamespaces": ownRule, "upgradeStrategy": dflt("Default"), "staticProvidedAPIs": drop,
	})}),
}

// genericRule is the CVO's merge of every kind it has no merge of its own
// for: each top-level field the manifest sets is the manifest's whole
// value; the others stay.
var genericRule = &rule{given: true, fields: map[string]*rule{"metadata": metaRule}}

// aggregatedClusterRole is a ClusterRole with an aggregationRule: the
// controller writes its rules, which the CVO leaves.
var aggregatedClusterRole = fieldRules(map[string]*rule{"metadata": metaRule, "aggregationRule": ownRule})

func init() {
	for _, r := range kindRules {
		noteDefaults(r)
	}
	noteDefaults(genericRule)
	noteDefaults(aggregatedClusterRole)
}

// mergeRules returns the rules of required's kind.
func mergeRules(required *unstructured.Unstructured) *rule {
	gk := required.GroupVersionKind().GroupKind()
	r, ok := kindRules[gk]
	if !ok {
		return genericRule
	}
	if gk.Kind == "ClusterRole" && required.Object["aggregationRule"] != nil {
		return aggregatedClusterRole
	}
	return r
}

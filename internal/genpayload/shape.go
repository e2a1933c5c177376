package genpayload

// The shape of a release payload, measured on ../shared/testdata/ocp-payload
// (a 4.22 snapshot: 26 files in manifests/, 579 manifest files of 42
// components in release-manifests/, 761 objects, 10.8 MB of manifests). Only
// counts and sizes are kept here, never content. TestShapeLikeRealPayload
// compares a generated payload with the real one when it is present.

// components are the release-manifests components of the real payload,
// largest first: how many files each has, and the run level of most of
// them (90, monitoring, is not a component's own level but where its
// ServiceMonitors and PrometheusRules go: monitoringAtLevel90 of them).
var components = []struct{ files, level int }{
	{99, 10}, {52, 50}, {49, 80}, {45, 20}, {43, 50}, {32, 30}, {28, 50}, {27, 50}, {17, 70}, {16, 20}, {15, 50},
	{15, 25}, {14, 70}, {14, 25}, {14, 50}, {12, 50}, {11, 50}, {8, 50}, {7, 50}, {6, 0}, {5, 0}, {5, 50}, {5, 30},
	{5, 50}, {5, 70}, {5, 10}, {5, 20}, {3, 10}, {2, 10}, {2, 10}, {2, 10}, {1, 10}, {1, 10}, {1, 50}, {1, 50},
	{1, 0}, {1, 70}, {1, 30}, {1, 25}, {1, 0}, {1, 25}, {1, 20},
}

const monitoringAtLevel90 = 0.9

// otherAtLevel90 is the share of other files at run level 90 (RBAC for
// the monitoring stack, dashboards).
const otherAtLevel90 = 0.04

// Files that are not one object each, per replica of the components
// (release-manifests/ of the real payload): CRDs with one file per feature
// set (24 groups), CRDs with one variant (60), and files of several
// documents (53: RBAC bundles, NetworkPolicies, ServiceMonitors,
// CredentialsRequests...). The CVO's manifests/ has one group, two lone
// CRDs and two such files more.
const (
	variantGroups = 24
	loneCRDs      = 60
	multiDocFiles = 53
)

// loneCRDSizes are the sizes in bytes of the YAML documents of the real
// payload's CustomResourceDefinitions that have one variant (62, sorted),
// and variantCRDSizes the median variant's size of those that have one per
// feature set (25 groups). CRDs are 90% of a payload's bytes.
var loneCRDSizes = []int{2461, 3092, 3464, 3780, 3817, 4243, 4738, 5327, 5368, 6432, 6506, 6742, 7232, 7854, 7910,
	8271, 8911, 9141, 9304, 9354, 9380, 9466, 9467, 9580, 9857, 10291, 11060, 11187, 11195, 11521, 12692, 13236,
	14000, 14372, 15384, 15647, 15831, 16040, 16709, 17900, 18676, 20086, 20324, 21505, 21775, 24703, 28563,
	29914, 35359, 35757, 36572, 36726, 36930, 40199, 41215, 76756, 88386, 104461, 148112, 240783, 461064, 814541}

var variantCRDSizes = []int{5978, 7755, 8646, 9251, 12424, 15924, 18002, 18982, 20774, 25209, 25646, 26031, 31728,
	32914, 34899, 37139, 43196, 46403, 59227, 61582, 68442, 88147, 175290, 211163, 224991}

// kindShape is one kind of object other than a CRD: how many the real
// payload has (the weight of the kind) and the mean size of its documents.
type kindShape struct {
	kind       string
	apiVersion string
	namespaced bool
	count      int
	meanSize   int
}

var kinds = []kindShape{
	{"Namespace", "v1", false, 0, 601}, // one per component, and in bundles
	{"NetworkPolicy", "networking.k8s.io/v1", true, 61, 737},
	{"ClusterRole", "rbac.authorization.k8s.io/v1", false, 49, 1100},
	{"RoleBinding", "rbac.authorization.k8s.io/v1", true, 41, 560},
	{"Role", "rbac.authorization.k8s.io/v1", true, 41, 647},
	{"ClusterRoleBinding", "rbac.authorization.k8s.io/v1", false, 37, 565},
	{"CredentialsRequest", "cloudcredential.openshift.io/v1", true, 35, 1240},
	{"Deployment", "apps/v1", true, 33, 4007},
	{"Service", "v1", true, 32, 630},
	{"ServiceMonitor", "monitoring.coreos.com/v1", true, 31, 1038},
	{"ConfigMap", "v1", true, 30, 600}, // plus bigConfigMaps
	{"ServiceAccount", "v1", true, 27, 371},
	{"ClusterOperator", "config.openshift.io/v1", false, 22, 979},
	{"PrometheusRule", "monitoring.coreos.com/v1", true, 19, 5090},
	{"SecurityContextConstraints", "security.openshift.io/v1", false, 14, 1348},
	{"FlowSchema", "flowcontrol.apiserver.k8s.io/v1", false, 10, 798},
	{"Custom", "", false, 45, 400}, // the many one-off custom resources (config CRs, operator CRs)
}

// bigConfigMaps is the share of ConfigMaps that carry a large payload
// (dashboards, scripts: 40-106 kB in the real payload).
const bigConfigMaps = 0.1

// bundles are the kinds of the multi-document files, each with a weight.
var bundles = []weighted[[]string]{
	{[]string{"Role", "RoleBinding"}, 6},
	{[]string{"ClusterRole", "ClusterRoleBinding"}, 4},
	{[]string{"ClusterRole", "ClusterRoleBinding", "ServiceAccount"}, 3},
	{[]string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}, 3},
	{[]string{"NetworkPolicy*"}, 6},
	{[]string{"ServiceMonitor*"}, 4},
	{[]string{"PrometheusRule", "ServiceMonitor"}, 4},
	{[]string{"Role", "RoleBinding", "ServiceMonitor"}, 3},
	{[]string{"CredentialsRequest*"}, 3},
	{[]string{"Service*"}, 3},
	{[]string{"Namespace", "NetworkPolicy"}, 1},
	{[]string{"FlowSchema*"}, 2},
	{[]string{"ClusterRole*", "ClusterRoleBinding*", "Role*", "RoleBinding*", "ServiceAccount*"}, 1},
}

// Profiles and feature sets the annotations name.
const (
	selfManaged = "self-managed-high-availability"
	singleNode  = "single-node-developer"
	ibmCloud    = "ibm-cloud-managed"
	hypershift  = "hypershift"
)

var featureSets = []string{"CustomNoUpgrade", "Default", "DevPreviewNoUpgrade", "OKD", "TechPreviewNoUpgrade"}

// profileCombos are the sets of include.release.openshift.io/<profile>:
// "true" annotations of the real payload's objects that have no feature-set
// annotation, with their counts. A component draws one; each of its objects
// keeps it, or draws again with probability redrawCombo.
var profileCombos = []weighted[[]string]{
	{[]string{selfManaged, singleNode, ibmCloud}, 129},
	{[]string{selfManaged, singleNode}, 147},
	{[]string{selfManaged, singleNode, ibmCloud, hypershift}, 147},
	{[]string{selfManaged, ibmCloud}, 53},
	{[]string{selfManaged, ibmCloud, hypershift}, 49},
	{[]string{selfManaged}, 51},
	{[]string{ibmCloud}, 6},
	{[]string{ibmCloud, hypershift}, 6},
	{nil, 6}, // no annotations at all: never included
}

const redrawCombo = 0.2

// variantCombos are the profile annotations of CRD variant groups.
var variantCombos = []weighted[[]string]{
	{[]string{selfManaged, ibmCloud}, 7},
	{[]string{selfManaged}, 2},
	{[]string{selfManaged, singleNode}, 1},
}

// threeVariants is the share of variant groups split Default / OKD /
// "CustomNoUpgrade,DevPreviewNoUpgrade,TechPreviewNoUpgrade" instead of
// one file per feature set.
const threeVariants = 0.15

// capabilities weighs the capability.openshift.io/name values; a component
// belongs to one with probability componentCapability.
var capabilities = []weighted[string]{
	{"OperatorLifecycleManager", 56}, {"MachineAPI", 56}, {"Ingress", 37}, {"Storage", 35}, {"ImageRegistry", 26},
	{"NodeTuning", 25}, {"OperatorLifecycleManagerV1", 13}, {"Storage+CloudCredential", 11},
	{"MachineAPI+CloudCredential", 8}, {"ImageRegistry+CloudCredential", 6}, {"CloudCredential+Ingress", 5},
	{"CloudCredential", 5}, {"Insights", 2}, {"Console", 2}, {"Build", 1},
}

const componentCapability = 0.35

// featureGates are gates the real payload's release.openshift.io/feature-gate
// annotations name.
var featureGates = []string{"GatewayAPIWithoutOLM", "ClusterAPIMachineManagement", "CRIOCredentialProviderConfig", "ClusterUpdateAcceptRisks"}

// Per-object annotation shares (of the real payload's 761 objects).
const (
	shareTechPreviewOnly  = 0.03  // release.openshift.io/feature-set on a non-CRD object
	shareFeatureGate      = 0.008 // release.openshift.io/feature-gate
	shareCreateOnly       = 0.063 // release.openshift.io/create-only
	shareDelete           = 0.017 // release.openshift.io/delete
	shareExcludeHosted    = 0.11  // exclude.release.openshift.io/internal-openshift-hosted
	shareBootstrap        = 0.075 // release.openshift.io/bootstrap-required
	shareMajorVersion     = 0.01  // release.openshift.io/major-version (CRDs only: 4% of them)
	shareCommentPreamble  = 0.3   // files that start with a comment block and "---"
	shareTrailingEmptyDoc = 0.05  // multi-document files that end with "---"
	shareBareEquals       = 0.01  // CRDs with a bare "=" in an enum
)

// cvoFiles is how many files manifests/ (the CVO's own, Go templates) has;
// it does not grow with the scale: a payload has one CVO.
const cvoFiles = 26

// imagesPerComponent bounds the image-references tags of a component (132
// tags for 42 components in the real payload, some used by no manifest).
const imagesPerComponent = 3

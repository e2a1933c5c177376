// Package nodetuning is the Node Tuning component: it renders
// PerformanceProfiles (performance.openshift.io/v2) into what the node
// tuning operator's (NTO's) render writes for them (a MachineConfig, a
// KubeletConfig, a Tuned with five TuneD profiles and a RuntimeClass per
// profile, and a workload partitioning MachineConfig per pool on a
// partitioned cluster) and, on a hosted control plane (HyperShift), into
// the ConfigMaps that carry them. docs/node-tuning.md compares every object
// and field with NTO's.
//
// Standalone, Hook finds PerformanceProfiles, MachineConfigPools and
// MachineConfigs among the admin's extra manifests and the payload (they
// stay in the plan), and the Infrastructure among the cluster facts. Each
// profile belongs to the one pool whose node selector matches its own (the
// built-in master and worker pools are assumed when the manifests lack
// them); workload partitioning is on with Infrastructure
// status.cpuPartitioning AllNodes, or on a single-node control plane whose
// MachineConfigs write the kubelet's pinning file. The objects are
// generated at run level 81, after the MachineConfig and KubeletConfig
// CRDs (run level 80) and the Tuned CRD (run level 50).
//
// Hosted (component.Input.HostedControlPlane), the profiles come from
// ConfigMaps labelled hypershift.openshift.io/performanceprofile-config=true,
// and the outputs are ConfigMaps in the source ConfigMap's namespace named,
// labelled, annotated and keyed as the seed's static diagram says (or as the
// upstream operator ships them, with Naming "upstream"), each with a
// controller owner reference to the source ConfigMap, plus a status
// ConfigMap and the RuntimeClass. The owner references need the source's
// UID, so these writes are an apply-time HostedStep placed after the source
// ConfigMap; render shows them through StepSpec.Preview with the owner
// reference's uid left out (an owner reference without a uid is rejected by
// the API server, so the preview cannot be applied by mistake).
//
// Rendering is pure and deterministic: the same profile gives the same bytes.
// Invalid profiles are reported with FILE#DOC, the object and the field, and
// fail the plan before anything is applied. Every size the input controls
// is bounded before it is used (CPU ids by MaxCPUID, counts and NUMA nodes
// by their 32-bit fields).
//
// The package imports lib/component, lib/manifest, apimachinery,
// openshift/api (config), k8s.io/kubelet (the kubelet configuration type)
// and k8s.io/utils; its step reaches the cluster only through
// component.Cluster. It never imports plan or payload.
//
// May import: lib/component, lib/manifest, lib/quantity.
// Cluster I/O: none.
package nodetuning

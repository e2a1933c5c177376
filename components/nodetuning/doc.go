// Package nodetuning is the Node Tuning component: it turns a
// PerformanceProfile (performance.openshift.io/v2) into the four objects the
// node tuning operator's performance profile controller would create, a
// MachineConfig, a KubeletConfig, a Tuned and a RuntimeClass, and, on a
// hosted control plane (HyperShift), into the ConfigMaps that carry them.
//
// Standalone, Hook finds PerformanceProfiles among the admin's extra
// manifests (they stay in the plan) and adds the four objects as generated
// objects at run level 81, after the MachineConfig and KubeletConfig CRDs
// (run level 80) and the Tuned CRD (run level 50).
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
// fail the plan before anything is applied.
//
// The package imports lib/component, lib/manifest, apimachinery, k8s.io/utils
// and client-go's dynamic client (only in the step, only through
// component.Cluster). It never imports plan or payload.
//
// May import: lib/component, lib/manifest.
// Cluster I/O: none.
package nodetuning

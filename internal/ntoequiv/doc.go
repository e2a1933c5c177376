// Package ntoequiv compares the objects the node tuning component renders
// with the node tuning operator's (NTO's) own render, object by object, and
// says how they relate: identical, equivalent (and by which rule) or
// different (and where).
//
// Identical means equal as objects once the fields that hold their type's
// zero value are dropped (NTO marshals whole Go structs, so its output
// carries `fips: false`, `status: {}`, `kernelArguments: null`; the API
// server and the Machine Config Operator read those exactly as absent).
//
// Equivalent is decided per kind:
//   - MachineConfig: same name, labels, kernelType and kernel arguments; the
//     same files (path, mode, overwrite) and systemd units (name, enabled);
//     and each file or unit whose bytes differ is equal by its format:
//     systemd units and drop-ins as ordered directives (comments and
//     Description ignored, ExecStart command lines as the same command, the
//     same last word and the same set of words), TOML and sysctl files as
//     keys and values, JSON as values, udev rules as rule lines, marker
//     files as both non-empty. Shell scripts cannot be compared this way:
//     they count as equivalent when both exist at the same path and mode
//     and are bash scripts, and the result says so (their behaviour is
//     tested where they are written).
//   - Tuned: the same metadata, recommendations and profile names, and for
//     each CPU vendor (Intel, AMD and ARM) and kernel (realtime or not) the
//     same effective TuneD profile: the include expression evaluated, the
//     included profiles of the Tuned merged in TuneD's order (later wins),
//     and every section's options equal (summary ignored; kernel command
//     line options compared in order, whitespace runs as one space).
//
// The package is pure (no I/O) and imports the standard library and
// k8s.io/kubelet (the kubelet configuration type). hack/ntocompare drives it over rendered directories;
// the node tuning tests use its TuneD and systemd parsers to assert effective
// values.
//
// May import: nothing.
// Cluster I/O: none.
package ntoequiv

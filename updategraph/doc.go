// Package updategraph is the server side of the update service for
// clusters that cannot reach Red Hat's: it builds the update graph of each
// channel from release images and graph-data, and answers clusters'
// requests for it, as the OpenShift Update Service (Cincinnati) does.
//
//   - Reader reads the releases of a registry repository (each tag's
//     image with the release label; its release-metadata: version,
//     previous, next, metadata with channels), each image once, remembered
//     by digest; Dir reads payload directories instead.
//   - ReadGraphData reads a directory in the layout of
//     openshift/cincinnati-graph-data: channels/*.yaml (a channel's
//     versions) and blocked-edges/*.yaml (updates removed, or kept as
//     conditional updates with a risk: name, message, URL, matching
//     rules), errors naming the file and field.
//   - Build makes the graph of every channel and architecture
//     (cincinnati.Graph) as the service's plugins do: edges from previous
//     and next, conditional edges and their risks, blocked edges removed,
//     channel membership.
//   - Handler answers the service's endpoint (/api/upgrades_info/v1/graph
//     ?channel=&arch=) with the service's JSON and its error answers.
//
// `payload-apply update-graph` is the command around it.
//
// May import: lib/cincinnati, lib/image, lib/registry, lib/safefs, payload.
package updategraph

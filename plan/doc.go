// Package plan runs the offline pipeline from a payload to an ordered plan:
// load, select (profile chain, feature set, feature gates, capabilities,
// exclusion id), and the task graph. Later stages (overlays, component
// render hooks) plug in here as they are built.
//
// It is pure: the same Options give the same Plan, byte for byte. It never
// talks to a cluster; callers that know a cluster resolve its facts first
// and pass them in Options.
package plan

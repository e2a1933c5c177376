// Package operator holds the end-to-end tests of `payload-apply operator`,
// run as processes against real kube-apiservers (test/apiserver) with the
// real payload: leader election and a leader killed with SIGKILL, drift
// repaired within a resync, a steady cluster written nothing, SIGTERM
// releasing the Lease, the metrics scraped over HTTP, and (make
// test-fleet) three clusters kept by three operators whose Leases live in
// a fourth server; and the update service (TestUpdateService): an
// operator whose ClusterVersion names `update-graph --serve` over releases
// in the real registry, its risks judged by Debian's Prometheus scraping
// it. Writes are counted by the API server itself, from its audit log. The
// tests are behind the e2e build tag.
//
// May import: internal/gobuild.
package operator

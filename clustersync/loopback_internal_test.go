package clustersync

import "testing"

// TestLoopback: which servers Connect asks for uncompressed answers.
func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"https://127.0.0.1:6443":        true,
		"https://127.5.0.1":             true,
		"https://[::1]:6443":            true,
		"https://localhost:6443/prefix": true,
		"127.0.0.1:6443":                true,
		"localhost":                     true,
		"https://10.0.0.1:6443":         false,
		"https://api.cluster.example":   false,
		"https://localhost.example.com": false,
		"https://[::2]:6443":            false,
		"":                              false,
		"https://%zz":                   false,
	} {
		if got := loopback(host); got != want {
			t.Errorf("loopback(%q) = %v, want %v", host, got, want)
		}
	}
}

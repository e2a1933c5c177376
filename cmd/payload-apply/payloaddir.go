package main

import (
	"os"
	"path/filepath"

	"github.com/payload-apply/payload-apply/payload"
)

// payloadSubdir returns a usage error when dir is the manifests/ or
// release-manifests/ directory of a payload rather than the payload (its
// release-manifests/ holds release-metadata; a manifests/ has a
// release-manifests/ beside it): the flag wants the directory above.
func payloadSubdir(flag, dir string) error {
	clean := filepath.Clean(dir)
	base, parent := filepath.Base(clean), filepath.Dir(clean)
	isPayloadDir := func(d string) bool {
		st, err := os.Stat(filepath.Join(d, payload.ReleaseManifestDir))
		return err == nil && st.IsDir()
	}
	_, metaErr := os.Stat(filepath.Join(clean, payload.ReleaseMetadataFile))
	switch {
	case base == payload.ReleaseManifestDir && (metaErr == nil || isPayloadDir(parent)),
		base == payload.ManifestDir && isPayloadDir(parent):
		return usageErrorf("%s %s: this is the %s/ directory of a payload, not a payload: pass the directory above it, %s %s", flag, dir, base, flag, parent)
	case metaErr == nil && !isPayloadDir(clean):
		return usageErrorf("%s %s: holds %s, as a payload's %s/ directory does: pass the payload directory above it (%s), which holds %s/", flag, dir, payload.ReleaseMetadataFile, payload.ReleaseManifestDir, parent, payload.ReleaseManifestDir)
	}
	return nil
}

// hasPayloadDirs returns a usage error naming dir when it holds neither
// manifests/ nor release-manifests/.
func hasPayloadDirs(flag, dir string) error {
	for _, sub := range []string{payload.ManifestDir, payload.ReleaseManifestDir} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err == nil && st.IsDir() {
			return nil
		}
	}
	return usageErrorf("%s %s: holds neither %s/ nor %s/: want a payload directory (one holding them), an OCI image layout or an image tarball", flag, dir, payload.ManifestDir, payload.ReleaseManifestDir)
}

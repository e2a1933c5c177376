package payload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Digest fingerprints a payload's content: "sha256:" and the SHA-256 of
// every file of manifests/ and release-manifests/ (release-metadata and
// image-references included), in name order, each as its path, its size
// and its bytes. The same files give the same digest wherever they are; a
// changed, added or removed file changes it. Files are read within the
// limits Load applies (DefaultMaxFiles, DefaultMaxPayloadSize, the
// manifest file size); errors name the file. It stops when ctx ends.
func Digest(ctx context.Context, fsys fs.FS) (string, error) {
	r := newReader(ctx, fsys, LoadOptions{})
	h := sha256.New()
	files := 0
	var buf []byte // one buffer for every file, as large as the largest
	for _, dir := range []string{ManifestDir, ReleaseManifestDir} {
		entries, err := fs.ReadDir(fsys, dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fileError(dir, err)
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			if files++; files > r.maxFiles {
				return "", fileError(dir, fmt.Errorf("more than %d files", r.maxFiles))
			}
			if err := ctx.Err(); err != nil { // Ctrl-C: stop between files
				return "", err
			}
			name := dir + "/" + e.Name()
			if e.Type()&fs.ModeSymlink != 0 {
				if err := r.checkLinks(name); err != nil {
					return "", err
				}
			}
			data, err := manifest.ReadFileInto(r.fsys, name, r.limits.MaxFileSize, buf)
			if err != nil {
				return "", fileError(name, err)
			}
			buf = data[:cap(data)]
			if r.total += int64(len(data)); r.total > r.maxTotal {
				return "", fileError(name, fmt.Errorf("payload larger than %d bytes", r.maxTotal))
			}
			fmt.Fprintf(h, "%s\n%d\n", name, len(data))
			h.Write(data)
		}
	}
	if files == 0 {
		return "", errors.New("payload: no files in manifests/ or release-manifests/")
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

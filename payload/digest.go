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
	return digest(ctx, fsys, nil)
}

// digest is Digest; each file read is handed to each (nil: none) as well.
func digest(ctx context.Context, fsys fs.FS, each func(name string, data []byte)) (string, error) {
	r := newReader(ctx, fsys, LoadOptions{})
	h := sha256.New()
	var buf []byte // one buffer for every file, as large as the largest
	files, err := r.eachDigestFile(func(name string, link bool) error {
		data, err := r.readInto(name, link, buf)
		if err != nil {
			return err
		}
		buf = data[:cap(data)]
		if each != nil {
			each(name, data)
		}
		if r.total += int64(len(data)); r.total > r.maxTotal {
			return fileError(name, fmt.Errorf("payload larger than %d bytes", r.maxTotal))
		}
		fmt.Fprintf(h, "%s\n%d\n", name, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", err
	}
	if files == 0 {
		return "", errors.New("payload: no files in manifests/ or release-manifests/")
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// eachDigestFile calls fn with every file Digest reads (each file of
// manifests/ and release-manifests/, in name order; link when it is a
// symbolic link), at most maxFiles, and returns how many; ctx ending stops
// it between files.
func (r *reader) eachDigestFile(fn func(name string, link bool) error) (int, error) {
	files := 0
	for _, dir := range []string{ManifestDir, ReleaseManifestDir} {
		entries, err := fs.ReadDir(r.fsys, dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return files, fileError(dir, err)
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			if files++; files > r.maxFiles {
				return files, fileError(dir, fmt.Errorf("more than %d files", r.maxFiles))
			}
			if err := r.ctx.Err(); err != nil { // Ctrl-C: stop between files
				return files, err
			}
			if err := fn(dir+"/"+e.Name(), e.Type()&fs.ModeSymlink != 0); err != nil {
				return files, err
			}
		}
	}
	return files, nil
}

// readInto reads name into buf's memory when it holds the file, within
// the file size limit, checking a symbolic link first.
func (r *reader) readInto(name string, link bool, buf []byte) ([]byte, error) {
	if link {
		if err := r.checkLinks(name); err != nil {
			return nil, err
		}
	}
	data, err := manifest.ReadFileInto(r.fsys, name, r.limits.MaxFileSize, buf)
	if err != nil {
		return nil, fileError(name, err)
	}
	return data, nil
}

// DigestMemo keeps digests (lib/plancache's store does, for commands):
// Load returns the digest stored under key, Store stores one.
type DigestMemo interface {
	Load(key [32]byte) (string, bool)
	Store(key [32]byte, digest string)
}

// DigestOf is Digest of a payload whose manifest files fp fingerprinted
// (FingerprintOf), remembered in memo: the key is the SHA-256 of every
// file Digest reads, each file's own SHA-256 taken from fp (the other
// files, those Load does not read, are read and hashed here). A digest is
// stored only when every file it was computed from hashes as the key
// says: never under the key of other bytes. So the second command over
// an unchanged payload reads no file twice: the fingerprint read them.
func DigestOf(ctx context.Context, fsys fs.FS, fp *Fingerprint, memo DigestMemo) (string, error) {
	if fp == nil || memo == nil {
		return Digest(ctx, fsys)
	}
	key, sums, err := digestKey(ctx, fsys, fp)
	if err != nil {
		// Digest reports it (a file gone, a limit): the same error.
		return Digest(ctx, fsys)
	}
	if d, ok := memo.Load(key); ok {
		return d, nil
	}
	same, read := true, 0
	d, err := digest(ctx, fsys, func(name string, data []byte) {
		read++
		if want, ok := sums[name]; !ok || sha256.Sum256(data) != want {
			same = false
		}
	})
	if err == nil && same && read == len(sums) {
		memo.Store(key, d)
	}
	return d, err
}

// digestKey returns the memo key of the files Digest reads and the
// SHA-256 it assumes of each.
func digestKey(ctx context.Context, fsys fs.FS, fp *Fingerprint) ([32]byte, map[string][32]byte, error) {
	r := newReader(ctx, fsys, LoadOptions{})
	h := sha256.New()
	h.Write([]byte("payload-apply digest memo v1\n"))
	sums := map[string][32]byte{}
	var buf []byte
	_, err := r.eachDigestFile(func(name string, link bool) error {
		sum, ok := fp.Files[name]
		if !ok {
			// Not a file Load reads (a README, say): hashed here.
			data, err := r.readInto(name, link, buf)
			if err != nil {
				return err
			}
			buf = data[:cap(data)]
			sum = sha256.Sum256(data)
		}
		sums[name] = sum
		fmt.Fprintf(h, "%s\x00%x\n", name, sum)
		return nil
	})
	if err != nil {
		return [32]byte{}, nil, err
	}
	var key [32]byte
	h.Sum(key[:0])
	return key, sums, nil
}

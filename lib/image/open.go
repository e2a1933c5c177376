package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/payload-apply/payload-apply/lib/safefs"
)

// maxMetadataSize bounds index.json, manifest.json, image manifests and
// config files, which are read whole.
const maxMetadataSize = 8 << 20

// Open returns the image at path without reading its layers:
//
//   - a directory holding oci-layout and index.json: an OCI image layout;
//   - a tar holding oci-layout and index.json: an OCI archive (skopeo's
//     oci-archive:, a tar of a layout);
//   - a tar holding manifest.json: an image tarball as `docker save` and
//     Write with FormatDockerArchive write it.
//
// The layout's index (or the archive's manifest.json) must name exactly one
// image; an image index inside must name one image or have one for
// linux/amd64. Manifests and configs above 8 MiB, tar entries with unsafe
// names or special types, and more entries than opts.MaxFiles are refused
// with a *RefusedError. Layer blobs of an OCI layout are checked against
// their digests as they are read. Errors start with path.
func Open(path string, opts LoadOptions) (v1.Image, error) {
	opts = opts.withDefaults()
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var img v1.Image
	if st.IsDir() {
		img, err = openLayout(dirBlobs(path))
	} else {
		img, err = openTarball(path, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

// IsLayout reports whether dir looks like an OCI image layout: it holds
// the oci-layout and index.json files.
func IsLayout(dir string) bool {
	for _, f := range []string{"oci-layout", "index.json"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// blobSource reads files of an OCI layout by slash-separated name.
type blobSource interface {
	open(name string) (io.ReadCloser, int64, error)
}

// dirBlobs is an OCI layout directory.
type dirBlobs string

func (d dirBlobs) open(name string) (io.ReadCloser, int64, error) {
	f, err := safefs.Open(filepath.Join(string(d), filepath.FromSlash(name)), safefs.Regular)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file", name)
	}
	return f, st.Size(), nil
}

// tarBlobs is an OCI archive: every open scans the tar for the entry.
type tarBlobs string

func (t tarBlobs) open(name string) (io.ReadCloser, int64, error) {
	f, err := safefs.Open(string(t), safefs.Regular)
	if err != nil {
		return nil, 0, err
	}
	tr := tar.NewReader(bufio.NewReader(f))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			f.Close()
			return nil, 0, fmt.Errorf("%s: %w", name, os.ErrNotExist)
		}
		if err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("read tar: %w", err)
		}
		if hdr.Typeflag == tar.TypeReg && path.Clean(hdr.Name) == name {
			return struct {
				io.Reader
				io.Closer
			}{io.LimitReader(tr, hdr.Size), f}, hdr.Size, nil
		}
	}
}

// readSmall reads a metadata file whole, refusing large ones.
func readSmall(src blobSource, name string) ([]byte, error) {
	rc, size, err := src.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if size > maxMetadataSize {
		return nil, &RefusedError{Layer: -1, Entry: name, Reason: ErrTooLarge, Detail: fmt.Sprintf("%d bytes, limit %d for metadata", size, maxMetadataSize)}
	}
	return io.ReadAll(io.LimitReader(rc, maxMetadataSize))
}

func blobName(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// readBlob reads a metadata blob and checks it against its digest.
func readBlob(src blobSource, h v1.Hash) ([]byte, error) {
	data, err := readSmall(src, blobName(h))
	if err != nil {
		return nil, err
	}
	if err := verifyDigest(data, h); err != nil {
		return nil, err
	}
	return data, nil
}

// openLayout reads an OCI layout's index and returns its one image.
func openLayout(src blobSource) (v1.Image, error) {
	data, err := readSmall(src, "index.json")
	if err != nil {
		return nil, err
	}
	var index v1.IndexManifest
	if err := json.Unmarshal(data, &index); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	desc, err := pickImage(src, index.Manifests, "index.json", 0)
	if err != nil {
		return nil, err
	}
	manifest, err := readBlob(src, desc.Digest)
	if err != nil {
		return nil, err
	}
	if _, err := ManifestKind(manifest, desc.MediaType); err != nil {
		return nil, fmt.Errorf("%s: %w", blobName(desc.Digest), err)
	}
	var m v1.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		return nil, fmt.Errorf("image manifest %s: %w", desc.Digest, err)
	}
	mt := desc.MediaType
	if m.MediaType != "" {
		mt = m.MediaType
	}
	return partial.CompressedToImage(&layoutImage{src: src, manifest: manifest, parsed: &m, mediaType: mt})
}

// pickImage chooses the one image descriptors name, descending into image
// indexes.
func pickImage(src blobSource, descs []v1.Descriptor, where string, depth int) (v1.Descriptor, error) {
	if depth > MaxIndexDepth {
		return v1.Descriptor{}, fmt.Errorf("%s: image indexes nested more than %d deep (the index depth limit)", where, MaxIndexDepth)
	}
	if len(descs) == 0 {
		return v1.Descriptor{}, fmt.Errorf("%s: names no image", where)
	}
	if len(descs) > 1 {
		var amd64 []v1.Descriptor
		var names []string
		for _, d := range descs {
			if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == "amd64" {
				amd64 = append(amd64, d)
			}
			n := d.Annotations["org.opencontainers.image.ref.name"]
			if n == "" {
				n = d.Digest.String()
			}
			names = append(names, n)
		}
		if len(amd64) != 1 {
			return v1.Descriptor{}, fmt.Errorf("%s: names %d images (%s): want one", where, len(descs), strings.Join(names, ", "))
		}
		descs = amd64
	}
	d := descs[0]
	switch d.MediaType {
	case types.OCIManifestSchema1, types.DockerManifestSchema2:
		return d, nil
	case types.OCIImageIndex, types.DockerManifestList:
		data, err := readBlob(src, d.Digest)
		if err != nil {
			return v1.Descriptor{}, err
		}
		if _, err := ManifestKind(data, d.MediaType); err != nil {
			return v1.Descriptor{}, fmt.Errorf("%s: %w", blobName(d.Digest), err)
		}
		var index v1.IndexManifest
		if err := json.Unmarshal(data, &index); err != nil {
			return v1.Descriptor{}, fmt.Errorf("image index %s: %w", d.Digest, err)
		}
		return pickImage(src, index.Manifests, "image index "+d.Digest.String(), depth+1)
	}
	return v1.Descriptor{}, fmt.Errorf("%s: %s has media type %q, not an image", where, d.Digest, d.MediaType)
}

// layoutImage is an image of an OCI layout or archive.
type layoutImage struct {
	src       blobSource
	manifest  []byte
	parsed    *v1.Manifest
	mediaType types.MediaType
}

var _ partial.CompressedImageCore = (*layoutImage)(nil)

func (li *layoutImage) MediaType() (types.MediaType, error) { return li.mediaType, nil }
func (li *layoutImage) RawManifest() ([]byte, error)        { return li.manifest, nil }
func (li *layoutImage) RawConfigFile() ([]byte, error) {
	return readBlob(li.src, li.parsed.Config.Digest)
}

func (li *layoutImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if h == li.parsed.Config.Digest {
		return &layoutBlob{src: li.src, desc: li.parsed.Config}, nil
	}
	for _, l := range li.parsed.Layers {
		if l.Digest == h {
			return &layoutBlob{src: li.src, desc: l}, nil
		}
	}
	return nil, fmt.Errorf("blob %s: not in the image manifest", h)
}

// layoutBlob is a layer blob, checked against its digest as it is read.
type layoutBlob struct {
	src  blobSource
	desc v1.Descriptor
}

func (b *layoutBlob) Digest() (v1.Hash, error)            { return b.desc.Digest, nil }
func (b *layoutBlob) Size() (int64, error)                { return b.desc.Size, nil }
func (b *layoutBlob) MediaType() (types.MediaType, error) { return b.desc.MediaType, nil }
func (b *layoutBlob) Compressed() (io.ReadCloser, error) {
	rc, _, err := b.src.open(blobName(b.desc.Digest))
	if err != nil {
		return nil, err
	}
	h, err := v1.Hasher(b.desc.Digest.Algorithm)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return &verifyReader{r: io.TeeReader(rc, h), c: rc, h: h, want: b.desc.Digest}, nil
}

// verifyReader fails at the end of a blob whose digest is not the one its
// descriptor names.
type verifyReader struct {
	r    io.Reader
	c    io.Closer
	h    hash.Hash
	want v1.Hash
}

func (v *verifyReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	if err == io.EOF {
		if got := fmt.Sprintf("%x", v.h.Sum(nil)); got != v.want.Hex {
			return n, fmt.Errorf("%s: content has digest %s:%s", blobName(v.want), v.want.Algorithm, got)
		}
	}
	return n, err
}

func (v *verifyReader) Close() error { return v.c.Close() }

// openTarball scans a tar's headers, refusing hostile ones, and opens it
// as an OCI archive or a docker-archive tarball.
func openTarball(file string, opts LoadOptions) (v1.Image, error) {
	f, err := safefs.Open(file, safefs.Regular)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return nil, errors.New("a gzip-compressed file: decompress it first (gunzip), then give the tarball")
	}
	tr := tar.NewReader(br)
	names := map[string]bool{}
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, tar.ErrInsecurePath) && hdr != nil {
			return nil, &RefusedError{Layer: -1, Entry: hdr.Name, Reason: ErrUnsafePath, Detail: "insecure path"}
		}
		if err != nil {
			return nil, fmt.Errorf("not an image tarball: read tar: %w", err)
		}
		if n >= opts.MaxFiles {
			return nil, &RefusedError{Layer: -1, Entry: hdr.Name, Reason: ErrTooManyFiles, Detail: fmt.Sprintf("more than %d entries", opts.MaxFiles)}
		}
		name, err := cleanName(hdr.Name)
		if err != nil {
			return nil, &RefusedError{Layer: -1, Entry: hdr.Name, Reason: ErrUnsafePath, Detail: err.Error()}
		}
		switch hdr.Typeflag {
		case tar.TypeReg, tar.TypeDir, tar.TypeXGlobalHeader:
		case tar.TypeSymlink, tar.TypeLink:
			if linkEscapes(name, hdr.Linkname) || (hdr.Typeflag == tar.TypeLink && path.IsAbs(hdr.Linkname)) {
				return nil, &RefusedError{Layer: -1, Entry: hdr.Name, Reason: ErrUnsafeLink, Detail: fmt.Sprintf("link to %q", hdr.Linkname)}
			}
		default:
			return nil, &RefusedError{Layer: -1, Entry: hdr.Name, Reason: ErrSpecialFile, Detail: fmt.Sprintf("entry type %q", string(rune(hdr.Typeflag)))}
		}
		if hdr.Size > opts.MaxEntrySize {
			return nil, &RefusedError{Layer: -1, Entry: hdr.Name, Reason: ErrTooLarge, Detail: fmt.Sprintf("%d bytes, limit %d per entry", hdr.Size, opts.MaxEntrySize)}
		}
		if (strings.HasSuffix(name, ".json") || name == "oci-layout") && hdr.Size > maxMetadataSize {
			return nil, &RefusedError{Layer: -1, Entry: hdr.Name, Reason: ErrTooLarge, Detail: fmt.Sprintf("%d bytes, limit %d for metadata", hdr.Size, maxMetadataSize)}
		}
		names[name] = true
	}
	switch {
	case names["oci-layout"] && names["index.json"]:
		return openLayout(tarBlobs(file))
	case names["manifest.json"]:
		img, err := tarball.Image(func() (io.ReadCloser, error) { return safefs.Open(file, safefs.Regular) }, nil)
		if err != nil {
			return nil, fmt.Errorf("docker-archive: %w", err)
		}
		return img, nil
	}
	return nil, errors.New("not an image tarball: it has neither manifest.json (docker-archive) nor oci-layout and index.json (OCI archive)")
}

package updategraph

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"golang.org/x/sync/errgroup"

	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/registry"
	"github.com/payload-apply/payload-apply/lib/safefs"
	"github.com/payload-apply/payload-apply/payload"
)

// Limits of reading releases.
const (
	// MaxTags bounds the tags of a repository.
	MaxTags = 100_000
	// readers is how many images are read at once.
	readers = 4
)

// Reader reads the releases of a registry repository, each image once: it
// remembers what it read by digest (a release, or that the image is not
// one), so that reading the repository again reads only new images. Make
// it with NewReader; it is safe for concurrent use.
type Reader struct {
	client *registry.Client
	mu     sync.Mutex
	seen   map[string]seen // by digest
	// Reads counts the images read (not from memory).
	reads int
}

// seen is what an image is: a release, not one (nil), or one in error
// (its content: reading it again would say the same).
type seen struct {
	rel *Release
	err error
}

// NewReader returns a Reader that talks to registries through client.
func NewReader(client *registry.Client) *Reader {
	return &Reader{client: client, seen: map[string]seen{}}
}

// Reads returns how many images were read from the registry.
func (rd *Reader) Reads() int {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return rd.reads
}

// Repository returns the releases of repo ("HOST/REPO"): every tag's
// image whose config has the release label (io.openshift.release, which
// `oc adm release new` and `payload-apply build` set; other images, such
// as the component images `oc adm release mirror` puts beside a release,
// and cosign's signature tags, are skipped), with its release-metadata.
// An image of several tags is one release. A tag that cannot be read, or
// whose metadata is wrong or contradicts the image (another version than
// its label), is an error naming the tag; the other releases are
// returned with the errors.
func (rd *Reader) Repository(ctx context.Context, repo string) ([]Release, error) {
	ref, err := rd.client.ParseReference(repo + ":latest")
	if err != nil || strings.ContainsAny(repo, "@") || strings.Count(repo[strings.LastIndex(repo, "/")+1:], ":") > 0 {
		return nil, fmt.Errorf("repository %q: want HOST/REPO, without a tag or digest", repo)
	}
	r := ref.Context()
	tags, err := rd.client.Tags(ctx, r, MaxTags)
	if err != nil {
		return nil, err
	}
	sort.Strings(tags)
	var (
		mu   sync.Mutex
		out  = map[string]Release{}
		errs []error
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readers)
	for _, tag := range tags {
		if strings.HasSuffix(tag, ".sig") || strings.HasSuffix(tag, ".att") || strings.HasSuffix(tag, ".sbom") {
			continue
		}
		g.Go(func() error {
			rel, err := rd.image(gctx, r.Tag(tag))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case gctx.Err() != nil:
				return gctx.Err()
			case err != nil:
				errs = append(errs, err)
			case rel != nil:
				if _, dup := out[rel.Digest]; !dup {
					out[rel.Digest] = *rel
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	rels := make([]Release, 0, len(out))
	for _, rel := range out {
		rels = append(rels, rel)
	}
	sort.Slice(rels, func(i, j int) bool { return rels[i].Source < rels[j].Source })
	return rels, errors.Join(errs...)
}

// image reads the release of one tag: nil when its image is not a
// release. This is the one place that opens a release image (the release
// source of issue 30 is to replace it).
func (rd *Reader) image(ctx context.Context, tag name.Tag) (*Release, error) {
	res, err := rd.client.Resolve(ctx, tag)
	if err != nil {
		return nil, err
	}
	digest := res.Digest.String()
	rd.mu.Lock()
	known, ok := rd.seen[digest]
	rd.mu.Unlock()
	switch {
	case ok && known.err != nil:
		return nil, fmt.Errorf("%s: %w", tag, known.err)
	case ok && known.rel == nil:
		return nil, nil
	case ok:
		rel := *known.rel
		rel.Source = tag.String()
		return &rel, nil
	}
	pinned := tag.Context().Digest(digest)
	img, _, err := rd.client.Image(ctx, pinned)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("%s: config: %w", tag, err)
	}
	var s seen
	if label := cf.Config.Labels[image.ReleaseLabel]; label != "" {
		pulled, err := rd.client.Pull(ctx, pinned, image.LoadOptions{}, "")
		if err != nil {
			return nil, err
		}
		s.rel, s.err = release("", pulled.FS, label)
		if s.err == nil {
			s.rel.Payload, s.rel.Digest, s.rel.Arch = pinned.String(), digest, cf.Architecture
			if res.MediaType.IsIndex() {
				s.rel.Arch = "multi"
			}
			if s.rel.Arch == "" {
				s.rel, s.err = nil, errors.New("the image's config names no architecture")
			}
		}
	}
	rd.mu.Lock()
	rd.seen[digest] = s
	rd.reads++
	rd.mu.Unlock()
	if s.err != nil {
		return nil, fmt.Errorf("%s: %w", tag, s.err)
	}
	if s.rel == nil {
		return nil, nil
	}
	rel := *s.rel
	rel.Source = tag.String()
	return &rel, nil
}

// release reads release-manifests/release-metadata of a payload; label,
// when set, is the version the image says it is.
func release(source string, fsys fs.FS, label string) (*Release, error) {
	prefix := ""
	if source != "" {
		prefix = source + ": "
	}
	data, err := fs.ReadFile(fsys, "release-manifests/release-metadata")
	if err != nil {
		return nil, fmt.Errorf("%srelease-manifests/release-metadata: %w", prefix, err)
	}
	md, err := payload.ParseReleaseMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("%srelease-manifests/release-metadata: %w", prefix, err)
	}
	if label != "" && label != md.Version {
		return nil, fmt.Errorf("%srelease-manifests/release-metadata: version %s, but the image's %s label says %s", prefix, md.Version, image.ReleaseLabel, label)
	}
	rel := &Release{Version: md.Semver, Previous: md.Previous, Next: md.Next, Source: source, Metadata: map[string]string{}}
	var bad []string
	for k, v := range md.Metadata {
		s, ok := v.(string)
		if !ok {
			bad = append(bad, k)
			continue
		}
		rel.Metadata[k] = s
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Errorf("%srelease-manifests/release-metadata: metadata %s: want strings (the update service's metadata are strings)", prefix, strings.Join(bad, ", "))
	}
	return rel, nil
}

// Dir returns the releases of dir: each of its directories is a payload
// directory (manifests/, release-manifests/ with release-metadata), named
// in the graph as the cluster's record names a payload on disk (its
// absolute path and content digest, PATH@sha256:...), of architecture
// arch. A directory whose metadata is wrong is an error naming it; the
// others are returned with the errors.
func Dir(ctx context.Context, dir, arch string) ([]Release, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	entries, err := safefs.Dir(abs).ReadDir(".")
	if err != nil {
		return nil, err
	}
	if len(entries) > MaxTags {
		return nil, fmt.Errorf("%s: more than %d entries", dir, MaxTags)
	}
	var rels []Release
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		path := filepath.Join(abs, e.Name())
		fsys := safefs.Dir(path)
		rel, err := release(path, fsys, "")
		if err == nil {
			var d string
			if d, err = payload.Digest(ctx, fsys); err == nil {
				rel.Payload, rel.Digest, rel.Arch = path+"@"+d, d, arch
				rels = append(rels, *rel)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rels, errors.Join(errs...)
}

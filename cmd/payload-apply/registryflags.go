package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime/debug"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/imagecache"
	"github.com/payload-apply/payload-apply/lib/plancache"
	"github.com/payload-apply/payload-apply/lib/registry"
	"github.com/payload-apply/payload-apply/lib/safefs"
	"github.com/payload-apply/payload-apply/payload"
)

// registryFlags are the flags of every command that may talk to a
// registry: credentials, TLS, and the payload cache.
type registryFlags struct {
	registryConfig string
	insecure       []string
	noCache        bool

	c *registry.Client
}

func (r *registryFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&r.registryConfig, "registry-config", "", "registry credentials file (containers-auth.json or docker config.json); default: $REGISTRY_AUTH_FILE, else $XDG_RUNTIME_DIR/containers/auth.json, ~/.config/containers/auth.json, ~/.docker/config.json")
	fs.StringSliceVar(&r.insecure, "insecure-registry", nil, "registry HOST or HOST:PORT whose TLS certificate is not verified and that may be reached over plain HTTP (like skopeo --tls-verify=false); repeat for more")
	fs.BoolVar(&r.noCache, "no-cache", false, "pull payload images again instead of reading them from the cache (os.UserCacheDir()/payload-apply/payloads), parse payloads again instead of reading their parse from the plan cache (os.UserCacheDir()/payload-apply/plans), and store nothing there")
}

// client returns the registry client of the flags (one per command).
func (r *registryFlags) client() *registry.Client {
	if r.c == nil {
		r.c = registry.New(registry.Options{
			Keychain:  registry.DefaultKeychain(r.registryConfig, nil),
			Insecure:  r.insecure,
			UserAgent: "payload-apply/" + version(),
		})
	}
	return r.c
}

// sourceKind says where a payload came from.
type sourceKind string

const (
	sourceEmbedded  sourceKind = "embedded"
	sourceDirectory sourceKind = "directory"
	sourceImage     sourceKind = "image"    // an OCI layout or an image tarball
	sourceRegistry  sourceKind = "registry" // pulled, or read from the cache
)

// payloadSource describes a payload given on the command line.
type payloadSource struct {
	// Spec is the argument as given; empty for the embedded payload.
	Spec string
	Kind sourceKind
	// Digest is what signatures name: the manifest digest of a local image,
	// the digest a registry reference resolved to (an image index's for a
	// multi-platform image). Zero for directories.
	Digest v1.Hash
	// Ref is the registry reference, for Kind sourceRegistry.
	Ref name.Reference
	// Cached is true when a registry payload was read from the cache.
	Cached bool
	// Parsed keeps what a cached payload's manifests parse to (nil
	// without the cache): give it to plan.Options.Parsed.
	Parsed *imagecache.Parsed
}

// Pinned is the registry repository at Digest, or "" when not pulled.
func (s payloadSource) Pinned() string {
	if s.Ref == nil {
		return ""
	}
	return s.Ref.Context().Digest(s.Digest.String()).String()
}

// openPayload opens a payload argument of flag (--payload,
// --against-payload, a positional IMAGE): a payload directory (read through
// os.Root), an OCI layout directory or an image tarball, or a registry
// reference (HOST/REPO:TAG, HOST/REPO@sha256:..., docker://...), pulled or
// read from the cache. A file of that name wins over a reference;
// docker:// forces one. A payload that cannot be read is a usage error
// (exit 2); an interrupted pull exits 130.
func (r *registryFlags) openPayload(ctx context.Context, flag, spec string) (fs.FS, payloadSource, error) {
	if !strings.HasPrefix(spec, registry.DockerPrefix) {
		st, err := os.Stat(spec)
		switch {
		case err == nil && safefs.Check(spec, st, safefs.RegularOrDir) != nil:
			// A named pipe or a device: never opened (lib/safefs).
			return nil, payloadSource{}, usageErrorf("%s %v", flag, safefs.Check(spec, st, safefs.RegularOrDir))
		case err == nil && st.IsDir() && !image.IsLayout(spec):
			if err := payloadSubdir(flag, spec); err != nil {
				return nil, payloadSource{}, err
			}
			if err := hasPayloadDirs(flag, spec); err != nil {
				return nil, payloadSource{}, err
			}
			return rootFS(spec), payloadSource{Spec: spec, Kind: sourceDirectory}, nil
		case err == nil:
			fsys, err := image.Load(spec, image.LoadOptions{})
			if err != nil {
				return nil, payloadSource{}, &exitError{Code: exitUsage, Err: fmt.Errorf("%s %w", flag, err)}
			}
			return fsys, payloadSource{Spec: spec, Kind: sourceImage, Digest: fsys.Digest()}, nil
		case !registry.IsReference(spec):
			return nil, payloadSource{}, usageErrorf("%s: %v (neither a payload file nor a registry reference HOST/REPO:TAG)", flag, err)
		}
	}
	fsys, src, err := r.pull(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return nil, src, &exitError{Code: exitInterrupted, Err: fmt.Errorf("%s: interrupted", flag)}
		}
		return nil, src, &exitError{Code: exitUsage, Err: fmt.Errorf("%s: %w", flag, err)}
	}
	return fsys, src, nil
}

// pull reads a registry payload: by digest from the cache when it is
// there (nothing asked of the network for a digest reference; one HEAD
// request resolves a tag), else from the registry, then into the cache.
func (r *registryFlags) pull(ctx context.Context, spec string) (*image.FS, payloadSource, error) {
	logger := klog.FromContext(ctx)
	c := r.client()
	ref, err := c.ParseReference(spec)
	if err != nil {
		return nil, payloadSource{}, err
	}
	src := payloadSource{Spec: spec, Kind: sourceRegistry, Ref: ref}
	res, err := c.Resolve(ctx, ref)
	if err != nil {
		return nil, src, err
	}
	src.Digest = res.Digest
	var cache *imagecache.Cache
	if !r.noCache {
		if dir, err := imagecache.DefaultDir(); err != nil {
			logger.Info("Warning: no payload cache", "err", err)
		} else {
			cache = &imagecache.Cache{Dir: dir}
		}
	}
	if cache != nil {
		fsys, _, err := cache.Get(res.Digest)
		if err != nil {
			logger.Info("Warning: payload cache", "err", err)
		}
		if fsys != nil {
			src.Cached, src.Parsed = true, parsedCache(cache, res.Digest, fsys)
			if src.Parsed.Ready() && os.Getenv("GOGC") == "" {
				debug.SetGCPercent(decodedGCPercent)
			}
			logger.V(1).Info("Payload from the cache", "reference", spec, "digest", res.Digest, "requests", c.Requests())
			return fsys, src, nil
		}
	}
	pulled, err := c.Pull(ctx, res.Pinned(), image.LoadOptions{}, "")
	if err != nil {
		return nil, src, err
	}
	logger.V(1).Info("Pulled payload", "reference", spec, "digest", res.Digest, "image", pulled.FS.Digest(),
		"layers", pulled.Layers, "layersRead", pulled.LayersRead, "bytes", pulled.BytesRead, "requests", c.Requests())
	if cache != nil {
		if err := cache.Put(res.Digest, res.Pinned().String(), pulled.FS); err != nil {
			logger.Info("Warning: payload not cached", "err", err)
		} else {
			src.Parsed = parsedCache(cache, res.Digest, pulled.FS)
		}
	}
	return pulled.FS, src, nil
}

// decodedGCPercent is the garbage collector's target when the payload's
// parse comes from the cache, unless GOGC says otherwise. The command's
// default of 50 (main.go) bounds the memory of parsing, which makes ten
// times its result in garbage; decoding the cached parse makes little
// garbage beyond what it keeps, so there the low target only spends CPU:
// rendering the real payload from the cache takes 58 ms of CPU at 200
// against 73 at 50, and 89 MB of peak RSS against 85 (docs/benchmarks.md,
// "Pulled releases").
const decodedGCPercent = 200

// parsedCache is the parse cache of a cached payload: its manifest files
// that are not templates, for this build of payload-apply.
func parsedCache(cache *imagecache.Cache, digest v1.Hash, fsys *image.FS) *imagecache.Parsed {
	var files []string
	for _, f := range fsys.Files() {
		dir := path.Dir(f)
		if (dir != payload.ManifestDir && dir != payload.ReleaseManifestDir) || !payload.IsManifestFile(f) {
			continue
		}
		if dir == payload.ManifestDir {
			if data, err := fsys.ReadFile(f); err != nil || payload.IsTemplate(data) {
				continue
			}
		}
		files = append(files, f)
	}
	return cache.Parsed(digest, files, buildID())
}

// buildID names this build of payload-apply, whose parser made a parse
// cache: its version and the executable's path, size and time.
func buildID() string {
	id := version()
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			id += fmt.Sprintf(" %s %d %d", exe, st.Size(), st.ModTime().UnixNano())
		}
	}
	return id
}

// openImage opens an image argument that is used as an image, not read
// as a payload (build's --base): an OCI layout, an image tarball or a
// registry reference (only its manifest is read now).
func (r *registryFlags) openImage(ctx context.Context, flag, spec string) (v1.Image, error) {
	if _, err := os.Stat(spec); err == nil || !registry.IsReference(spec) {
		img, err := image.Open(spec, image.LoadOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		return img, nil
	}
	c := r.client()
	ref, err := c.ParseReference(spec)
	if err != nil {
		return nil, usageErrorf("%s: %v", flag, err)
	}
	img, _, err := c.Image(ctx, ref)
	if err != nil {
		return nil, &exitError{Code: exitUsage, Err: fmt.Errorf("%s: %w", flag, err)}
	}
	return img, nil
}

// pushImage pushes img to the registry reference to and returns it pinned
// by digest. A bad reference is a usage error; a registry that refuses is
// exit 2 (credentials, unreachable).
func pushImage(ctx context.Context, r *registryFlags, to string, img v1.Image) (string, error) {
	c := r.client()
	ref, err := c.ParseReference(to)
	if err != nil {
		return "", usageErrorf("--to: %v", err)
	}
	res, err := c.Push(ctx, ref, img)
	if err != nil {
		if ctx.Err() != nil {
			return "", &exitError{Code: exitInterrupted, Err: fmt.Errorf("--to: interrupted")}
		}
		return "", &exitError{Code: exitUsage, Err: err}
	}
	return res.Pinned().String(), nil
}

// planCache is the plan cache of payloads not read from the payload cache
// (directories, image layouts and tarballs): nil with --no-cache or when
// there is no cache directory (reported once).
func (r *registryFlags) planCache(ctx context.Context) *plancache.Store {
	if r.noCache {
		return nil
	}
	dir, err := plancache.DefaultDir()
	if err != nil {
		klog.FromContext(ctx).Info("Warning: no plan cache", "err", err)
		return nil
	}
	return &plancache.Store{Dir: dir}
}

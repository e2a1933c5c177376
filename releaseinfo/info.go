package releaseinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/payload-apply/payload-apply/payload"
)

// ChannelsKey is the release-metadata key listing the update channels a
// release is in, comma separated.
const ChannelsKey = "io.openshift.upgrades.graph.release.channels"

// Info describes one payload.
type Info struct {
	// Name is the release version, or the payload's location when it has
	// no release-metadata.
	Name string `json:"name"`
	// Source says where the payload came from: directory, image (a local
	// OCI layout or tarball), registry or embedded.
	Source string `json:"source"`
	// Digest is the image digest ("" for a directory).
	Digest string `json:"digest,omitempty"`
	// PullFrom is the registry pull spec by digest.
	PullFrom string `json:"pullFrom,omitempty"`
	// Created, OS, Architecture and Labels come from the image config.
	Created      *time.Time        `json:"created,omitempty"`
	OS           string            `json:"os,omitempty"`
	Architecture string            `json:"architecture,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	// ManifestFiles and Objects count the manifest files and the objects
	// they hold.
	ManifestFiles int `json:"manifestFiles"`
	Objects       int `json:"objects"`
	// Metadata is release-metadata; nil when the payload has none.
	Metadata *Metadata `json:"metadata,omitempty"`
	// Components are the components of the task graph, in run-level order.
	Components []Component `json:"components"`
	// Images are the image references, by name.
	Images []Image `json:"images"`
	// Files maps every file of manifests/ and release-manifests/ to the
	// sha256 of its content, for Compare.
	Files map[string]string `json:"files,omitempty"`
}

// Metadata is a payload's release-metadata.
type Metadata struct {
	Version  string         `json:"version"`
	Previous []string       `json:"previous,omitempty"`
	Next     []string       `json:"next,omitempty"`
	Channels []string       `json:"channels,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Component is one component of a payload: the files named
// 0000_<runlevel>_<component>_*.
type Component struct {
	// Name is the component; "-" gathers files whose names do not parse.
	Name string `json:"name"`
	// RunLevels are the run levels its files are in, ascending ("00").
	RunLevels []string `json:"runLevels"`
	// Files and Objects count its manifest files and objects.
	Files   int `json:"files"`
	Objects int `json:"objects"`
}

// Image is an image reference: the image-references tag and pull spec.
type Image struct {
	Name     string `json:"name"`
	PullSpec string `json:"pullSpec"`
}

// Describe summarizes p, whose files are fsys (the same payload, to hash
// the files).
func Describe(p *payload.Payload, fsys fs.FS) (*Info, error) {
	info := &Info{Components: []Component{}, Images: []Image{}}
	if r := p.Release; r != nil {
		info.Name = r.Version
		md := &Metadata{Version: r.Version, Previous: r.Previous, Next: r.Next, Metadata: r.Metadata}
		if ch, ok := r.Metadata[ChannelsKey].(string); ok && ch != "" {
			for _, c := range strings.Split(ch, ",") {
				md.Channels = append(md.Channels, strings.TrimSpace(c))
			}
		}
		info.Metadata = md
	}
	byName := map[string]*Component{}
	levels := map[string]map[int]bool{}
	first := map[string]int{}
	for _, f := range p.Files {
		info.ManifestFiles++
		info.Objects += len(f.Manifests)
		level, name, ok := payload.ParseFileName(f.Path)
		if !ok {
			name, level = "-", 1<<30
		}
		c := byName[name]
		if c == nil {
			c = &Component{Name: name}
			byName[name] = c
			levels[name] = map[int]bool{}
			first[name] = level
		}
		c.Files++
		c.Objects += len(f.Manifests)
		levels[name][level] = true
		if level < first[name] {
			first[name] = level
		}
	}
	for name, c := range byName {
		var ls []int
		for l := range levels[name] {
			ls = append(ls, l)
		}
		sort.Ints(ls)
		for _, l := range ls {
			if l == 1<<30 {
				c.RunLevels = append(c.RunLevels, "-")
				continue
			}
			c.RunLevels = append(c.RunLevels, fmt.Sprintf("%02d", l))
		}
		info.Components = append(info.Components, *c)
	}
	sort.Slice(info.Components, func(i, j int) bool {
		a, b := info.Components[i], info.Components[j]
		if first[a.Name] != first[b.Name] {
			return first[a.Name] < first[b.Name]
		}
		return a.Name < b.Name
	})
	for name, spec := range p.Images() {
		info.Images = append(info.Images, Image{Name: name, PullSpec: spec})
	}
	sort.Slice(info.Images, func(i, j int) bool { return info.Images[i].Name < info.Images[j].Name })

	info.Files = map[string]string{}
	for _, root := range []string{payload.ManifestDir, payload.ReleaseManifestDir} {
		err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			info.Files[p] = hex.EncodeToString(sum[:])
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return info, nil
}

// Diff is what changed from one payload to another.
type Diff struct {
	From *Info `json:"from"`
	To   *Info `json:"to"`
	// UpgradeFrom is true when To's metadata lists From's version among
	// its previous versions (an update edge).
	UpgradeFrom bool `json:"upgradeFrom"`
	// Images changed (another pull spec), added and removed.
	ImagesChanged []ImageChange `json:"imagesChanged"`
	ImagesAdded   []Image       `json:"imagesAdded"`
	ImagesRemoved []Image       `json:"imagesRemoved"`
	// Files of manifests/ and release-manifests/ changed, added and
	// removed, by path.
	FilesChanged []string `json:"filesChanged"`
	FilesAdded   []string `json:"filesAdded"`
	FilesRemoved []string `json:"filesRemoved"`
}

// ImageChange is an image reference whose pull spec changed.
type ImageChange struct {
	Name string `json:"name"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Identical reports whether nothing differs (digests aside).
func (d *Diff) Identical() bool {
	return len(d.ImagesChanged)+len(d.ImagesAdded)+len(d.ImagesRemoved)+len(d.FilesChanged)+len(d.FilesAdded)+len(d.FilesRemoved) == 0
}

// Compare returns what changed from from to to.
func Compare(from, to *Info) *Diff {
	d := &Diff{From: from, To: to, ImagesChanged: []ImageChange{}, ImagesAdded: []Image{}, ImagesRemoved: []Image{},
		FilesChanged: []string{}, FilesAdded: []string{}, FilesRemoved: []string{}}
	if from.Metadata != nil && to.Metadata != nil {
		for _, p := range to.Metadata.Previous {
			if p == from.Metadata.Version {
				d.UpgradeFrom = true
			}
		}
	}
	old := map[string]string{}
	for _, i := range from.Images {
		old[i.Name] = i.PullSpec
	}
	for _, i := range to.Images {
		spec, ok := old[i.Name]
		switch {
		case !ok:
			d.ImagesAdded = append(d.ImagesAdded, i)
		case spec != i.PullSpec:
			d.ImagesChanged = append(d.ImagesChanged, ImageChange{Name: i.Name, From: spec, To: i.PullSpec})
		}
		delete(old, i.Name)
	}
	for _, i := range from.Images {
		if _, ok := old[i.Name]; ok {
			d.ImagesRemoved = append(d.ImagesRemoved, i)
		}
	}
	for p, sum := range to.Files {
		switch was, ok := from.Files[p]; {
		case !ok:
			d.FilesAdded = append(d.FilesAdded, p)
		case was != sum:
			d.FilesChanged = append(d.FilesChanged, p)
		}
	}
	for p := range from.Files {
		if _, ok := to.Files[p]; !ok {
			d.FilesRemoved = append(d.FilesRemoved, p)
		}
	}
	sort.Strings(d.FilesChanged)
	sort.Strings(d.FilesAdded)
	sort.Strings(d.FilesRemoved)
	return d
}

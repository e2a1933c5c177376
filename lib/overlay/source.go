package overlay

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// KustomizationFileNames returns the names kustomize accepts for a
// kustomization file, in the order it looks for them.
func KustomizationFileNames() []string {
	return []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}
}

// Source is a directory of overlays: each overlay is a subdirectory holding a
// kustomization file.
type Source struct {
	// FS holds the overlays.
	FS fs.FS
	// Label prefixes paths in messages: "embedded:overlays/" or the
	// directory given to --overlays-dir, with a trailing slash.
	Label string
}

// Overlay is one overlay directory found in a Source.
type Overlay struct {
	// Name is what the profile calls the overlay.
	Name string
	// Source holds the overlay.
	Source Source
	// Dir is the overlay's directory, slash-separated, relative to Source.FS.
	Dir string
	// File is the overlay's kustomization file as messages name it:
	// Source.Label + Dir + "/kustomization.yaml".
	File string

	kustomization string // base name of the kustomization file
}

// Find returns the overlay at dir. It must be in exactly one source: a
// directory that two sources both hold is an error naming both, so a user
// directory cannot silently shadow an embedded overlay.
func Find(sources []Source, name, dir string) (*Overlay, error) {
	if !fs.ValidPath(dir) || dir == "." {
		return nil, fmt.Errorf("overlay %q: path %q is not a clean relative path", name, dir)
	}
	var found []*Overlay
	var labels []string
	for _, src := range sources {
		labels = append(labels, strings.TrimSuffix(src.Label, "/"))
		kf, err := kustomizationFile(src.FS, dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s%s: overlay %q: %w", src.Label, dir, name, err)
		}
		found = append(found, &Overlay{Name: name, Source: src, Dir: dir, File: src.Label + dir + "/" + kf, kustomization: kf})
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("overlay %q: no %s/kustomization.yaml in %s", name, dir, strings.Join(labels, " or "))
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%s: overlay %q is also defined in %s: rename one", found[1].File, name, found[0].File)
}

// kustomizationFile returns the base name of the kustomization file in dir,
// fs.ErrNotExist when there is none, or an error when there are several.
func kustomizationFile(fsys fs.FS, dir string) (string, error) {
	var names []string
	for _, n := range KustomizationFileNames() {
		if st, err := fs.Stat(fsys, path.Join(dir, n)); err == nil && !st.IsDir() {
			names = append(names, n)
		}
	}
	switch len(names) {
	case 0:
		return "", fs.ErrNotExist
	case 1:
		return names[0], nil
	}
	return "", fmt.Errorf("several kustomization files: %s", strings.Join(names, ", "))
}

// List returns the overlay directories of a source (the directories, at any
// depth, that hold a kustomization file and are not inside another overlay),
// sorted. validate uses it to report overlays no profile applies.
func List(src Source) ([]string, error) {
	var dirs []string
	err := fs.WalkDir(src.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == "." {
			return nil
		}
		if _, err := kustomizationFile(src.FS, p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			dirs = append(dirs, p)
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: list overlays: %w", strings.TrimSuffix(src.Label, "/"), err)
	}
	sort.Strings(dirs)
	return dirs, nil
}

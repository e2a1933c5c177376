package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// renderTopDirs are the directories render --output-dir writes at the top
// of its directory (a source file's own directory: the payload's, the
// generated objects', the --extra-manifests', the overlays' additions).
var renderTopDirs = map[string]bool{"manifests": true, "release-manifests": true, "generated": true, "extra": true, "overlays": true}

// maxCleanEntries bounds what --clean walks before giving up.
const maxCleanEntries = 100000

// checkOutputDir checks dir for render --output-dir: a new or empty
// directory is fine; a directory with files in it is refused (files of an
// earlier render would stay and mix with this one), unless clean, and then
// only when everything in it is what a render writes (renderTopDirs
// holding .yaml, .yml and .json files), which cleanOutputDir removes.
// Anything else is never deleted: the error names it.
func checkOutputDir(dir string, clean bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return usageErrorf("--output-dir: %v", err)
	case len(entries) == 0:
		return nil
	}
	if !clean {
		names := make([]string, 0, 3)
		for i, e := range entries {
			if i == 3 {
				names = append(names, "...")
				break
			}
			names = append(names, e.Name())
		}
		return usageErrorf("--output-dir %s: not empty (%s): files of an earlier render would mix with this one; pass --clean to remove an earlier render's files first, or name a new directory", dir, strings.Join(names, ", "))
	}
	if err := checkRenderOutput(dir, entries); err != nil {
		return usageErrorf("--output-dir %s: --clean removes only what render writes, and %v: remove it yourself or name another directory", dir, err)
	}
	return nil
}

// cleanOutputDir removes an earlier render from dir, after checkOutputDir
// said that dir holds nothing else.
func cleanOutputDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--output-dir %s: clean: %w", dir, err)
	}
	if err := checkRenderOutput(dir, entries); err != nil {
		return fmt.Errorf("--output-dir %s: clean: %w any more", dir, err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("--output-dir %s: clean: %w", dir, err)
		}
	}
	return nil
}

// checkRenderOutput returns an error naming the first entry of dir that
// render does not write.
func checkRenderOutput(dir string, entries []os.DirEntry) error {
	n := 0
	for _, e := range entries {
		top := filepath.Join(dir, e.Name())
		if !e.IsDir() || !renderTopDirs[e.Name()] {
			return fmt.Errorf("%s is not", top)
		}
		err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if n++; n > maxCleanEntries {
				return fmt.Errorf("more than %d entries under %s: not an earlier render", maxCleanEntries, dir)
			}
			switch {
			case d.IsDir():
				return nil
			case !d.Type().IsRegular():
				return fmt.Errorf("%s (not a regular file) is not", path)
			}
			switch filepath.Ext(path) {
			case ".yaml", ".yml", ".json":
				return nil
			}
			return fmt.Errorf("%s is not", path)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

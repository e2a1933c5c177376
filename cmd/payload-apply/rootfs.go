package main

import (
	"io/fs"
	"os"
)

// rootFS is a directory given on the command line, read through os.Root
// so that no name, and no symbolic link, reaches outside it ("path escapes
// from parent"), whatever the code reading it checks itself. Each call
// opens the root and closes it again (files opened stay usable), so
// nothing is left open when the command returns.
type rootFS string

var (
	_ fs.ReadFileFS = rootFS("")
	_ fs.ReadDirFS  = rootFS("")
	_ fs.StatFS     = rootFS("")
	_ fs.ReadLinkFS = rootFS("")
)

func (d rootFS) with(name string, f func(fs.FS) error) error {
	r, err := os.OpenRoot(string(d))
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer r.Close()
	return f(r.FS())
}

// Open opens name.
func (d rootFS) Open(name string) (file fs.File, err error) {
	err = d.with(name, func(fsys fs.FS) error { file, err = fsys.Open(name); return err })
	return file, err
}

// ReadFile reads name.
func (d rootFS) ReadFile(name string) (data []byte, err error) {
	err = d.with(name, func(fsys fs.FS) error { data, err = fs.ReadFile(fsys, name); return err })
	return data, err
}

// ReadDir lists name.
func (d rootFS) ReadDir(name string) (entries []fs.DirEntry, err error) {
	err = d.with(name, func(fsys fs.FS) error { entries, err = fs.ReadDir(fsys, name); return err })
	return entries, err
}

// Stat describes name, following links.
func (d rootFS) Stat(name string) (info fs.FileInfo, err error) {
	err = d.with(name, func(fsys fs.FS) error { info, err = fs.Stat(fsys, name); return err })
	return info, err
}

// Lstat describes name without following a final link.
func (d rootFS) Lstat(name string) (info fs.FileInfo, err error) {
	err = d.with(name, func(fsys fs.FS) error { info, err = fs.Lstat(fsys, name); return err })
	return info, err
}

// ReadLink returns the target of the link name.
func (d rootFS) ReadLink(name string) (target string, err error) {
	err = d.with(name, func(fsys fs.FS) error { target, err = fs.ReadLink(fsys, name); return err })
	return target, err
}

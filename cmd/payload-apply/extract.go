package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

func extractCommand() *command {
	return &command{
		name:  "extract",
		short: "Write a release payload's files to a directory, all of them or what a profile includes",
		usage: "PAYLOAD --output-dir DIR [--included [selection flags]]",
		long: `Writes the files of a release payload (a registry reference HOST/REPO:TAG,
HOST/REPO@sha256:... or docker://..., an OCI layout, an image tarball or a
payload directory) to --output-dir DIR as they are in the payload: DIR/manifests/ and
DIR/release-manifests/, so that DIR is itself a payload directory
(--payload DIR). DIR must not exist or be empty; the files are written
beside it and renamed into place, so a failure leaves nothing half written.

--included writes only what the selection includes, exactly as render
selects it (the profile, feature set, feature gates, capabilities and
exclusion of the selection flags; --cluster-config for the cluster's facts):
a file all of whose documents are included as it is, a file of which only
some are with those documents alone (as written, comments included), no
file of which none is; plus release-metadata and image-references. Unlike
'oc adm release extract --included', nothing is re-serialized and the
selection is the CVO's own. Overlays and components are not applied: that
is what render shows.

--to DIR, as 'oc adm release extract --to DIR' names it, is the deprecated
name of --output-dir (directories are --output-dir in every command).

Exit codes: 0 written; 1 the payload does not load or DIR cannot be
written; 2 usage error, or the payload could not be read or pulled.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &extractOptions{}
			fs.StringVar(&o.to, "output-dir", "", "directory to write the payload's files to (must not exist or be empty)")
			fs.StringVar(&o.to, "to", "", "deprecated: --output-dir")
			deprecateFlag(fs, "to", "use --output-dir (as every command names the directory it writes)")
			fs.BoolVar(&o.included, "included", false, "write only the manifests the selection includes")
			o.selection.addFlags(fs)
			_ = fs.MarkHidden("payload")
			return o
		},
	}
}

type extractOptions struct {
	to        string
	included  bool
	selection selectionFlags

	fsys fs.FS
	opts plan.Options
}

func (o *extractOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if len(args) != 1 {
		return usageErrorf("want one PAYLOAD, got %d arguments", len(args))
	}
	if o.selection.fs.Changed("payload") {
		return usageErrorf("give the payload as the argument, not --payload")
	}
	if err := o.Validate(); err != nil {
		return err
	}
	o.selection.payload = args[0]
	var err error
	if o.opts, err = o.selection.complete(ctx, nil); err != nil {
		return err
	}
	o.fsys = o.opts.Payload
	return nil
}

func (o *extractOptions) Validate() error {
	if o.to == "" {
		return usageErrorf("--output-dir DIR is required")
	}
	if !o.included {
		for _, f := range []string{"profile", "feature-set", "feature-gates", "feature-gate-manifest", "baseline-capability-set",
			"additional-capabilities", "exclude", "cluster-config", "profiles-dir"} {
			if o.selection.fs.Changed(f) {
				return usageErrorf("--%s selects: it goes with --included", f)
			}
		}
	}
	if st, err := os.Stat(o.to); err == nil {
		if !st.IsDir() {
			return usageErrorf("--output-dir %s: exists and is not a directory", o.to)
		}
		if entries, err := os.ReadDir(o.to); err != nil || len(entries) > 0 {
			return usageErrorf("--output-dir %s: exists and is not empty", o.to)
		}
	}
	return nil
}

func (o *extractOptions) Run(ctx context.Context, s IOStreams) error {
	// docs maps each file to the documents to write; nil: the whole file.
	var docs map[string]map[int]bool
	if o.included {
		p, err := plan.Build(ctx, o.opts)
		if err != nil {
			return err
		}
		docs = map[string]map[int]bool{}
		for _, m := range p.Selection.Included {
			if docs[m.File] == nil {
				docs[m.File] = map[int]bool{}
			}
			docs[m.File][m.Doc] = true
		}
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(o.to)), "."+filepath.Base(o.to)+".tmp-")
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	defer os.RemoveAll(tmp)
	written, partial := 0, 0
	for _, root := range []string{payload.ManifestDir, payload.ReleaseManifestDir} {
		names, err := files(o.fsys, root)
		if err != nil && !isNotExist(o.fsys, root) {
			return err
		}
		for _, name := range names {
			data, err := fs.ReadFile(o.fsys, name)
			if err != nil {
				return err
			}
			if docs != nil {
				base := path.Base(name)
				meta := root == payload.ReleaseManifestDir && (base == payload.ReleaseMetadataFile || base == payload.ImageReferencesFile)
				switch {
				case meta:
				case !payload.IsManifestFile(name) || docs[name] == nil:
					continue
				default:
					var whole bool
					if data, whole, err = includedDocuments(name, data, docs[name]); err != nil {
						return err
					}
					if !whole {
						partial++
					}
				}
			}
			dst := filepath.Join(tmp, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				return err
			}
			written++
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Remove(o.to); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("--to: %w", err)
	}
	if err := os.Rename(tmp, o.to); err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	msg := fmt.Sprintf("extracted %d files to %s", written, o.to)
	if o.included {
		msg += fmt.Sprintf(" (what profile %s includes; %d files with only some of their documents)", o.profileName(), partial)
	}
	fmt.Fprintln(s.ErrOut, msg)
	return nil
}

func (o *extractOptions) profileName() string {
	if o.opts.Profile != "" {
		return o.opts.Profile
	}
	return "(default)"
}

// includedDocuments returns the documents of a file that are included,
// as written, and whether that is the whole file. In a YAML file an
// excluded document becomes a comment, so every document keeps its index
// (FILE#N in messages and render's "# Source:" lines stay the same); in a
// JSON stream it is dropped.
func includedDocuments(name string, data []byte, want map[int]bool) ([]byte, bool, error) {
	split, err := manifest.SplitDocuments(data)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	whole := true
	for _, d := range split {
		if len(bytes.TrimSpace(d.Data)) > 0 && !want[d.Index] {
			whole = false
		}
	}
	if whole {
		return data, true, nil
	}
	var b bytes.Buffer
	for i, d := range split {
		blank := len(bytes.TrimSpace(d.Data)) == 0
		if d.JSON {
			if want[d.Index] {
				b.Write(d.Data)
				b.WriteByte('\n')
			}
			continue
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		switch {
		case blank || want[d.Index]:
			b.Write(d.Data)
			if len(d.Data) > 0 && !bytes.HasSuffix(d.Data, []byte("\n")) {
				b.WriteByte('\n')
			}
		default:
			fmt.Fprintf(&b, "# document %d: not included by the selection (payload-apply extract --included)\n", d.Index)
		}
	}
	return b.Bytes(), false, nil
}

func isNotExist(fsys fs.FS, root string) bool {
	_, err := fs.Stat(fsys, root)
	return err != nil
}

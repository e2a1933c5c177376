package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/releaseinfo"
)

func infoCommand() *command {
	return &command{
		name:  "info",
		short: "Describe a release payload, as 'oc adm release info' does",
		usage: "PAYLOAD [--changes-from OTHER] [-o text|json]",
		long: `Describes a release payload: a registry reference (HOST/REPO:TAG,
HOST/REPO@sha256:..., docker://...), an OCI layout, an image tarball or a
payload directory. Prints its name, digest, creation time, platform and
pull spec by digest; the release metadata (version, the versions it updates
from and to, channels, the rest of the metadata); the components with their
run levels and how many manifest files and objects each has; and the image
references.

--changes-from OTHER compares OTHER (the older release) with PAYLOAD: the
versions and whether PAYLOAD lists OTHER's version as one it updates from,
then the images changed, added and removed, and the manifest files changed,
added and removed.

-o json prints the same as one JSON object (with --changes-from: "from",
"to" and the changes).

Exit codes: 0 described; 1 the payload does not load; 2 usage error, or a
payload could not be read or pulled.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &infoOptions{}
			fs.StringVar(&o.changesFrom, "changes-from", "", "compare with this older payload")
			o.output = addOutputFlag(fs, formatText, formatJSON)
			o.registry.addFlags(fs)
			return o
		},
	}
}

type infoOptions struct {
	changesFrom string
	output      *outputFlag
	registry    registryFlags

	info, from *releaseinfo.Info
}

func (o *infoOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if len(args) != 1 {
		return usageErrorf("want one PAYLOAD, got %d arguments", len(args))
	}
	if err := o.Validate(); err != nil {
		return err
	}
	var err error
	if o.info, err = o.describe(ctx, "PAYLOAD", args[0]); err != nil {
		return err
	}
	if o.changesFrom != "" {
		o.from, err = o.describe(ctx, "--changes-from", o.changesFrom)
	}
	return err
}

// describe opens and loads one payload and summarizes it.
func (o *infoOptions) describe(ctx context.Context, flag, spec string) (*releaseinfo.Info, error) {
	fsys, src, err := o.registry.openPayload(ctx, flag, spec)
	if err != nil {
		return nil, err
	}
	lopts := payload.LoadOptions{}
	if src.Parsed != nil {
		lopts.Parsed = src.Parsed
	}
	p, err := payload.Load(ctx, fsys, lopts)
	if p == nil {
		return nil, fmt.Errorf("%s %s: %w", flag, spec, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s does not load: %w", flag, spec, err)
	}
	info, err := releaseinfo.Describe(p, fsys)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, spec, err)
	}
	info.Source = string(src.Kind)
	if info.Name == "" {
		info.Name = spec
	}
	if src.Digest.Hex != "" {
		info.Digest = src.Digest.String()
	}
	info.PullFrom = src.Pinned()
	if img, ok := fsys.(*image.FS); ok && img.Config() != nil {
		cf := img.Config()
		created := cf.Created.UTC()
		info.Created, info.OS, info.Architecture, info.Labels = &created, cf.OS, cf.Architecture, img.Labels()
	}
	return info, nil
}

func (o *infoOptions) Validate() error {
	return nil
}

func (o *infoOptions) Run(ctx context.Context, s IOStreams) error {
	if o.from != nil {
		d := releaseinfo.Compare(o.from, o.info)
		if o.output.value == formatJSON {
			return writeJSON(s.Out, d)
		}
		writeInfoDiff(s.Out, d)
		return nil
	}
	if o.output.value == formatJSON {
		return writeJSON(s.Out, o.info)
	}
	writeInfo(s.Out, o.info)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(data))
	return err
}

func writeInfo(out io.Writer, i *releaseinfo.Info) {
	w := tabwriter.NewWriter(out, 0, 4, 1, ' ', 0)
	defer w.Flush()
	fmt.Fprintf(w, "Name:\t%s\n", i.Name)
	if i.Digest != "" {
		fmt.Fprintf(w, "Digest:\t%s\n", i.Digest)
	}
	if i.Created != nil {
		fmt.Fprintf(w, "Created:\t%s\n", i.Created.Truncate(time.Second).Format(time.RFC3339))
	}
	if i.OS != "" {
		fmt.Fprintf(w, "OS/Arch:\t%s/%s\n", i.OS, i.Architecture)
	}
	fmt.Fprintf(w, "Manifests:\t%d files, %d objects\n", i.ManifestFiles, i.Objects)
	fmt.Fprintf(w, "Source:\t%s\n", i.Source)
	if i.PullFrom != "" {
		fmt.Fprintf(w, "\nPull From:\t%s\n", i.PullFrom)
	}
	if m := i.Metadata; m != nil {
		fmt.Fprintf(w, "\nRelease Metadata:\n")
		fmt.Fprintf(w, "  Version:\t%s\n", m.Version)
		fmt.Fprintf(w, "  Upgrades:\t%s\n", listOrNone(m.Previous))
		if len(m.Next) > 0 {
			fmt.Fprintf(w, "  Next:\t%s\n", strings.Join(m.Next, ", "))
		}
		fmt.Fprintf(w, "  Channels:\t%s\n", listOrNone(m.Channels))
		var keys []string
		for k := range m.Metadata {
			if k != releaseinfo.ChannelsKey {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		if len(keys) > 0 {
			fmt.Fprintf(w, "  Metadata:\n")
			for _, k := range keys {
				fmt.Fprintf(w, "    %s:\t%v\n", k, m.Metadata[k])
			}
		}
	}
	fmt.Fprintf(w, "\nComponents:\n  RUN LEVELS\tCOMPONENT\tFILES\tOBJECTS\n")
	for _, c := range i.Components {
		fmt.Fprintf(w, "  %s\t%s\t%d\t%d\n", strings.Join(c.RunLevels, ","), c.Name, c.Files, c.Objects)
	}
	fmt.Fprintf(w, "\nImages:\n  NAME\tPULL SPEC\n")
	for _, img := range i.Images {
		fmt.Fprintf(w, "  %s\t%s\n", img.Name, img.PullSpec)
	}
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "<none>"
	}
	return strings.Join(l, ", ")
}

func writeInfoDiff(out io.Writer, d *releaseinfo.Diff) {
	if d.From.Digest != "" && d.From.Digest == d.To.Digest {
		fmt.Fprintln(out, "Releases are identical")
		return
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	defer w.Flush()
	fmt.Fprintf(w, "\tFROM\tTO\n")
	fmt.Fprintf(w, "Name:\t%s\t%s\n", d.From.Name, d.To.Name)
	if d.From.Digest != "" || d.To.Digest != "" {
		fmt.Fprintf(w, "Digest:\t%s\t%s\n", orDash(d.From.Digest), orDash(d.To.Digest))
	}
	if d.From.Metadata != nil && d.To.Metadata != nil {
		fmt.Fprintf(w, "Version:\t%s\t%s\n", d.From.Metadata.Version, d.To.Metadata.Version)
		fmt.Fprintf(w, "Upgrade From:\t\t%s\n", map[bool]string{true: "Yes", false: "No"}[d.UpgradeFrom])
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, l := range lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	var lines []string
	for _, c := range d.ImagesChanged {
		lines = append(lines, c.Name+"\t"+c.From+"\t"+c.To)
	}
	section("Images Changed", lines)
	lines = nil
	for _, i := range d.ImagesAdded {
		lines = append(lines, i.Name+"\t"+i.PullSpec)
	}
	section("Images Added", lines)
	lines = nil
	for _, i := range d.ImagesRemoved {
		lines = append(lines, i.Name)
	}
	section("Images Removed", lines)
	section("Manifests Changed", d.FilesChanged)
	section("Manifests Added", d.FilesAdded)
	section("Manifests Removed", d.FilesRemoved)
	if d.Identical() {
		fmt.Fprintf(w, "\nNo image or manifest differs.\n")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// files lists every regular file under root of fsys (for extract).
func files(fsys fs.FS, root string) ([]string, error) {
	var out []string
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"

	"github.com/payload-apply/payload-apply/lib/resourceapply"
)

func versionCommand() *command {
	return &command{
		name:  "version",
		short: "Print the client's build and the cluster's version",
		usage: "[--client] [-o text|json|yaml] [--kubeconfig K]",
		long: `Prints the client's build, from the Go module the binary was built from:
its version ("(devel)" for a build from a checkout), the VCS revision and
commit time when the build recorded them ('make build' does; go build does
in a git clone; go run and -buildvcs=false do not), whether the checkout had
local changes, the Go version and the platform.

Then the API server's version, as kubectl version does: the cluster is the
one --kubeconfig (or the other cluster flags), KUBECONFIG, the in-cluster
configuration or ~/.kube/config names, in that order. Without any
configuration only the client is printed; --client never asks a server.

-o json and -o yaml print {"clientVersion": {...}, "serverVersion": {...}}
(serverVersion as the server's /version answers).

Exit codes: 0 printed; 2 usage error, or a cluster configured but not
reachable, or refusing the credentials (the client's version is printed
first).`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &versionOptions{}
			fs.BoolVar(&o.client, "client", false, "print the client's version only; ask no server")
			o.output = addOutputFlag(fs, formatText, formatJSON, formatYAML)
			o.kube.addFlags(fs)
			return o
		},
	}
}

type versionOptions struct {
	client bool
	output *outputFlag
	kube   kubeFlags
}

// buildVersion is the client's build, from the module's build info.
type buildVersion struct {
	// Version is the main module's version, "(devel)" for a checkout.
	Version string `json:"version"`
	// Revision, Time and Modified are the VCS revision, its commit time
	// and whether the checkout had changes, when the build recorded them.
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	Module    string `json:"module,omitempty"`
}

// versionInfo is what version prints.
type versionInfo struct {
	Client buildVersion     `json:"clientVersion"`
	Server *apiversion.Info `json:"serverVersion,omitempty"`
}

// gitRevision and gitModified are set by 'make build' (-ldflags -X) for
// builds go does not stamp with VCS information (a git worktree).
var gitRevision, gitModified string

// clientBuild reads the binary's build info.
func clientBuild() buildVersion {
	v := buildVersion{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	v.Revision, v.Modified = gitRevision, gitModified == "true"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Module = bi.Main.Path
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// version is the client's version for the User-Agent and --version:
// the module version, else "devel", with the revision when known.
func version() string {
	b := clientBuild()
	v := b.Version
	if v == "(devel)" {
		v = "devel"
	}
	if b.Revision != "" {
		v += "+" + shortRevision(b.Revision)
		if b.Modified {
			v += ".dirty"
		}
	}
	return v
}

func shortRevision(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}

// printVersionLine prints "payload-apply VERSION" (--version).
func printVersionLine(w io.Writer) error {
	_, err := fmt.Fprintln(w, "payload-apply", version())
	return err
}

func (o *versionOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if len(args) > 0 {
		return usageErrorf("unexpected arguments: %v", args)
	}
	return nil
}

func (o *versionOptions) Validate() error {
	if o.client && len(o.kube.given()) > 0 {
		return usageErrorf("--client and %s exclude each other", o.kube.given()[0])
	}
	return o.kube.validate()
}

func (o *versionOptions) Run(ctx context.Context, s IOStreams) error {
	info := versionInfo{Client: clientBuild()}
	var serverErr error
	if !o.client {
		info.Server, serverErr = o.serverVersion(ctx, s)
	}
	if err := o.print(s.Out, info); err != nil {
		return err
	}
	return serverErr
}

// serverVersion asks the configured cluster its version; nil, nil when
// no cluster is configured.
func (o *versionOptions) serverVersion(ctx context.Context, s IOStreams) (*apiversion.Info, error) {
	cfg, err := o.kube.restConfig(ctx, s)
	if isNoConfig(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, clusterError{fmt.Errorf("client: %w", err)}
	}
	v, err := dc.ServerVersion()
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return v, nil
	case errors.As(err, &status) && resourceapply.Classify(err) != resourceapply.ReasonUnauthorized:
		// It answered, with an error.
		return nil, clusterError{fmt.Errorf("asking the server at %s its version: %w", cfg.Host, err)}
	}
	return nil, connectionError(cfg.Host, err)
}

func (o *versionOptions) print(w io.Writer, info versionInfo) error {
	if o.output.value != formatText {
		return printData(w, o.output.value, info)
	}
	c := info.Client
	fmt.Fprintf(w, "Client Version: %s\n", c.Version)
	if c.Revision != "" {
		rev := c.Revision
		if c.Time != "" {
			rev += " (" + c.Time + ")"
		}
		if c.Modified {
			rev += " with local changes"
		}
		fmt.Fprintf(w, "Revision: %s\n", rev)
	} else {
		fmt.Fprintln(w, "Revision: unknown (built without VCS information, as go run does: 'make build' records it)")
	}
	fmt.Fprintf(w, "Go Version: %s %s\n", c.GoVersion, c.Platform)
	if info.Server != nil {
		_, err := fmt.Fprintf(w, "Server Version: %s\n", info.Server.GitVersion)
		return err
	}
	return nil
}

package clustersync

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/payload-apply/payload-apply/lib/safefs"
)

// CheckKubeconfigFiles refuses, before clientcmd or the transport reads
// them (a read would block for good on a named pipe with no writer, and
// never end on a device), the files that are not regular files among the
// kubeconfig files rules would load ($KUBECONFIG's list, ~/.kube/config)
// and the credential files cc's context and the overrides name.
func CheckKubeconfigFiles(rules *clientcmd.ClientConfigLoadingRules, cc clientcmd.ClientConfig, o *clientcmd.ConfigOverrides) error {
	if err := checkConfigFiles(rules); err != nil {
		return err
	}
	return checkCredentialFiles(cc, o)
}

// checkConfigFiles refuses the kubeconfig files rules would load that are
// not regular files.
func checkConfigFiles(rules *clientcmd.ClientConfigLoadingRules) error {
	for _, f := range rules.GetLoadingPrecedence() {
		if st, err := os.Stat(f); err == nil {
			if err := safefs.Check(f, st, safefs.Regular); err != nil {
				return fmt.Errorf("kubeconfig: %w", err)
			}
		}
	}
	return nil
}

// checkCredentialFiles refuses the files the kubeconfig's context and
// the flags name (token, client certificate and key, certificate
// authority; paths as clientcmd resolves them) that are not regular files,
// before clientcmd (which reads the token file) or the transport reads
// them: a read would block for good on a named pipe with no writer.
func checkCredentialFiles(cc clientcmd.ClientConfig, o *clientcmd.ConfigOverrides) error {
	raw, err := cc.RawConfig()
	if err != nil {
		return nil // ClientConfig says what is wrong with it
	}
	name, ctx := raw.CurrentContext, o.Context
	if o.CurrentContext != "" {
		name = o.CurrentContext
	}
	if c := raw.Contexts[name]; c != nil {
		if ctx.AuthInfo == "" {
			ctx.AuthInfo = c.AuthInfo
		}
		if ctx.Cluster == "" {
			ctx.Cluster = c.Cluster
		}
	}
	type file struct{ what, path string }
	files := []file{{"token file", o.AuthInfo.TokenFile}, {"client certificate", o.AuthInfo.ClientCertificate},
		{"client key", o.AuthInfo.ClientKey}, {"certificate authority", o.ClusterInfo.CertificateAuthority}}
	if a := raw.AuthInfos[ctx.AuthInfo]; a != nil {
		files = append(files, file{"token file", a.TokenFile}, file{"client certificate", a.ClientCertificate}, file{"client key", a.ClientKey})
	}
	if c := raw.Clusters[ctx.Cluster]; c != nil {
		files = append(files, file{"certificate authority", c.CertificateAuthority})
	}
	for _, f := range files {
		if f.path == "" {
			continue
		}
		st, err := os.Stat(f.path)
		if err != nil {
			continue // clientcmd or the transport says what is wrong with it
		}
		if err := safefs.Check(f.path, st, safefs.Regular); err != nil {
			return fmt.Errorf("kubeconfig: %s: %w", f.what, err)
		}
	}
	return nil
}

// loopback reports whether host (a rest.Config's Host: a URL, or
// host:port) names this machine: localhost or a loopback address.
func loopback(host string) bool {
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	name := u.Hostname()
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

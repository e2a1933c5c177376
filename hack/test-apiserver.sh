#!/usr/bin/env bash
# test-apiserver.sh: the real control plane that the end-to-end tests run against.
#
# Usage:
#   hack/test-apiserver.sh build
#       Build etcd, kube-apiserver, kube-controller-manager and kubectl into
#       _output/bin/ (repo root, gitignored) from the tools module hack/tools,
#       using only the Go module proxy. Skipped when the binaries exist and
#       were built from the current hack/tools/go.mod, go.sum and sources
#       (a hash is kept in _output/bin/.tools.stamp). Concurrent callers wait
#       for one another (flock).
#   hack/test-apiserver.sh start DIR [--controllers a,b] [-- EXTRA-APISERVER-FLAGS...]
#       Build if needed, then start etcd and kube-apiserver on free ports of
#       127.0.0.1, with a generated CA, serving certificate, service-account key
#       and static admin token (group system:masters), wait for /readyz and
#       write DIR/kubeconfig. With --controllers (or TEST_APISERVER_CONTROLLERS)
#       also start kube-controller-manager running only those controllers, e.g.
#       --controllers namespace-controller,garbage-collector-controller.
#       Certificates, data, logs (*.log) and pid files (*.pid) stay in DIR.
#       The processes keep running after this script exits.
#   hack/test-apiserver.sh stop DIR
#       Stop the processes whose pid files are in DIR, and only those (a pid is
#       signalled only while its command line still names DIR).
#
# The Go helper test/apiserver does the same for go test (one server per test
# package, started from TestMain); start/stop here run that helper's code
# through test/apiserver/internal/launch.
#
# Measured on the 2-core, 24 GiB machine (Kubernetes v1.35.4, etcd v3.6.5;
# details in hack/README.md): cold build about 6 minutes (1.9 GiB peak),
# rebuild with a warm Go build cache 8 s; start ready in about 3 s; about
# 300 MiB resident (390 MiB with kube-controller-manager).
set -euo pipefail

SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
ROOT=$(cd "$(dirname "$SELF")/.." && pwd)
TOOLS="$ROOT/hack/tools"
BIN="$ROOT/_output/bin"
STAMP="$BIN/.tools.stamp"
BINARIES=(etcd kube-apiserver kube-controller-manager kubectl)

export GOWORK=off
export CGO_ENABLED=0

usage() {
	sed -n '2,/^set -euo/p' "$SELF" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

# tools_hash prints a hash of everything the binaries are built from.
tools_hash() {
	(
		cd "$TOOLS"
		cat go.mod go.sum
		find cmd -type f -name '*.go' | LC_ALL=C sort | xargs cat
		# The build recipe itself is part of the input.
		sed -n '/^build_binaries() {$/,/^}$/p' "$SELF"
		go env GOVERSION GOOS GOARCH
	) | sha256sum | cut -d' ' -f1
}

up_to_date() {
	local b
	for b in "${BINARIES[@]}"; do
		[[ -x "$BIN/$b" ]] || return 1
	done
	[[ -f "$STAMP" && "$(cat "$STAMP")" == "$1" ]]
}

build_binaries() {
	local kube major minor ldflags pkg tmp
	kube=$(cd "$TOOLS" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
	major=${kube#v}
	major=${major%%.*}
	minor=${kube#v*.}
	minor=${minor%%.*}
	# Without a real version the binaries report v0.0.0-master, which
	# kube-apiserver's compatibility checks and kubectl refuse.
	ldflags="-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $pkg.gitVersion=$kube -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
		ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
	done
	tmp=$(mktemp -d "$BIN/.build.XXXXXX")
	(
		cd "$TOOLS"
		go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
			./cmd/etcd \
			k8s.io/kubernetes/cmd/kube-apiserver \
			k8s.io/kubernetes/cmd/kube-controller-manager \
			k8s.io/kubernetes/cmd/kubectl
	) || {
		rm -rf "$tmp"
		return 1
	}
	for pkg in "${BINARIES[@]}"; do
		mv -f "$tmp/$pkg" "$BIN/$pkg"
	done
	rmdir "$tmp"
}

cmd_build() {
	mkdir -p "$BIN"
	exec 9>"$BIN/.build.lock"
	flock 9
	local hash start
	hash=$(tools_hash)
	if up_to_date "$hash"; then
		return 0
	fi
	echo "test-apiserver: building ${BINARIES[*]} into $BIN (a cold build takes several minutes)" >&2
	start=$SECONDS
	rm -f "$STAMP"
	build_binaries
	echo "$hash" >"$STAMP"
	echo "test-apiserver: built in $((SECONDS - start))s" >&2
}

# launch runs the Go side of start/stop (test/apiserver/internal/launch).
launch() {
	mkdir -p "$BIN"
	(cd "$ROOT" && go build -o "$BIN/.launch" ./test/apiserver/internal/launch)
	"$BIN/.launch" "$@"
}

cmd_start() {
	[[ $# -ge 1 ]] || usage
	local dir
	dir=$(mkdir -p "$1" && cd "$1" && pwd)
	shift
	cmd_build
	exec 9>&-
	launch start --bin "$BIN" --dir "$dir" "$@"
}

cmd_stop() {
	[[ $# -eq 1 ]] || usage
	local dir
	dir=$(cd "$1" && pwd)
	launch stop --dir "$dir"
}

[[ $# -ge 1 ]] || usage
sub=$1
shift
case "$sub" in
build) [[ $# -eq 0 ]] || usage; cmd_build ;;
start) cmd_start "$@" ;;
stop) cmd_stop "$@" ;;
-h | --help | help) usage ;;
*) usage ;;
esac

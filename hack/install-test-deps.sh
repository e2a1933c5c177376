#!/usr/bin/env bash
# Installs the tools the tests use that Go does not bring, each only when
# missing, so a second run takes well under a second:
#   - from Debian: skopeo (reads and copies images, a client nobody here
#     wrote), docker-registry (CNCF distribution: the real registry the
#     registry tests push to and pull from), gnupg (gpg: makes the CVO-style
#     signatures the verification tests check) and faketime (gpg keys that
#     have already expired);
#   - cosign, built from the Go module proxy at COSIGN_VERSION into
#     _output/bin (about 6 minutes cold on 2 cores, once; the version is
#     recorded beside it, so changing COSIGN_VERSION rebuilds it).
set -euo pipefail

COSIGN_VERSION=${COSIGN_VERSION:-v2.6.5}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TEST_TOOLS_BIN:-$root/_output/bin}

need=()
for pair in skopeo:skopeo docker-registry:docker-registry gpg:gnupg faketime:faketime; do
	command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	echo "install-test-deps: installing ${need[*]} (apt-get)"
	$sudo apt-get update -qq
	# The docker-registry package would start a registry service where a
	# service manager runs; the tests start their own and need none.
	$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

mkdir -p "$bin"
stamp="$bin/.cosign.version"
if [ -x "$bin/cosign" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$COSIGN_VERSION" ]; then
	exit 0
fi
# One build at a time: helpers and CI jobs may share _output.
exec 9>"$bin/.cosign.lock"
flock 9
if [ -x "$bin/cosign" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$COSIGN_VERSION" ]; then
	exit 0
fi
echo "install-test-deps: building cosign $COSIGN_VERSION from the Go module proxy into $bin (once; about 6 minutes cold)"
start=$(date +%s)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Outside the module: cosign's own go.mod decides its dependencies.
(cd "$tmp" && GOBIN="$tmp" GOFLAGS=-buildvcs=false go install -trimpath -ldflags "-s -w" \
	"github.com/sigstore/cosign/v2/cmd/cosign@$COSIGN_VERSION")
mv "$tmp/cosign" "$bin/cosign"
echo "$COSIGN_VERSION" >"$stamp"
echo "install-test-deps: cosign $COSIGN_VERSION built in $(($(date +%s) - start)) s"

#!/usr/bin/env bash
# Installs the tools the tests use that Go does not bring, each only when
# missing, so a second run takes well under a second:
#   - from Debian: skopeo (reads and copies images, a client nobody here
#     wrote), docker-registry (CNCF distribution: the real registry the
#     registry tests push to and pull from), gnupg (gpg: makes the CVO-style
#     signatures the verification tests check), faketime (gpg keys that
#     have already expired) and prometheus (the server the update-risk tests
#     evaluate PromQL rules against, scraping the operator's /metrics);
#   - cosign, built from the Go module proxy at COSIGN_VERSION into
#     _output/bin (about 6 minutes cold on 2 cores, once; the version is
#     recorded beside it, so changing COSIGN_VERSION rebuilds it).
# make test runs it before any test starts (make test-deps).
#
# The Debian packages need root (apt-get). Without root and without sudo
# that works without a password, it says what to run instead of asking for
# a password half-way through a test run, and then fails under CI=true (a
# missing tool must fail CI) or goes on without them, so that the tests
# that need them skip with their own message.
set -euo pipefail

COSIGN_VERSION=${COSIGN_VERSION:-v2.6.5}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TEST_TOOLS_BIN:-$root/_output/bin}

need=()
for pair in skopeo:skopeo docker-registry:docker-registry gpg:gnupg faketime:faketime prometheus:prometheus; do
	command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
sudo=""
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo="sudo -n"
	else
		echo "install-test-deps: the tests need ${need[*]} (Debian packages); installing them needs root:" >&2
		echo "install-test-deps:   sudo apt-get install -y --no-install-recommends ${need[*]}    (or: sudo hack/install-test-deps.sh)" >&2
		if [ "${CI:-}" = "true" ]; then
			echo "install-test-deps: CI=true: failing, a missing tool must not pass CI" >&2
			exit 1
		fi
		echo "install-test-deps: going on without them: the tests that need them skip, saying so" >&2
		need=()
	fi
fi
if [ ${#need[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	echo "install-test-deps: installing ${need[*]} (apt-get)"
	$sudo apt-get update -qq
	# The docker-registry and prometheus packages would start services
	# where a service manager runs; the tests start their own and need none.
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

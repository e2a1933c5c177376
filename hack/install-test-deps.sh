#!/usr/bin/env bash
# Installs the tools the tests use that Go does not bring: skopeo, which the
# release image tests use to read built images with a tool nobody here wrote.
# Idempotent: does nothing when the tools are already there.
set -euo pipefail

if command -v skopeo >/dev/null 2>&1; then
	exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq skopeo >/dev/null
skopeo --version

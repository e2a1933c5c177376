# payload-apply: build, test, verify, bench. See README.md.
GO ?= go
BIN := bin/payload-apply
# The build tags of every build and test (internal/gobuild.Tags, held equal
# by its test): kustomize without its loader of Go plugins, which we never
# use; linking Go's plugin package makes the binary a third larger.
TAGS := kustomize_disable_go_plugin_support

.PHONY: build test unit e2e test-deps test-apiserver test-fleet test-complete operator-image verify bench bench-100x fuzz fuzz-ci fuzz-list

# build records the VCS revision (payload-apply version prints it): go's
# own stamping (even where GOFLAGS says -buildvcs=false), and for a git
# worktree, which go does not stamp, the revision and state git gives.
GIT_REVISION := $(shell git rev-parse HEAD 2>/dev/null)
GIT_MODIFIED := $(shell test -n "$$(git status --porcelain 2>/dev/null)" && echo true)
build:
	$(GO) build -tags $(TAGS) -buildvcs=auto -ldflags "-X main.gitRevision=$(GIT_REVISION) -X main.gitModified=$(GIT_MODIFIED)" -o $(BIN) ./cmd/payload-apply

# The real control plane the e2e tests use: built once from the Go module
# proxy into _output/bin (about 6 min cold on 2 cores, seconds afterwards).
test-apiserver:
	hack/test-apiserver.sh build

# Everything the tests use that Go does not bring, before any test starts:
# first the tools from Debian (skopeo, docker-registry, gnupg, faketime),
# which may need root (without it the script says what to run, then fails
# under CI=true and lets the tests skip with a message otherwise), and
# cosign, built once into _output/bin; then the test control plane.
test-deps:
	hack/install-test-deps.sh
	hack/test-apiserver.sh build

# Unit and end-to-end tests. The e2e tests start kube-apiserver and etcd on
# 127.0.0.1; with CI=true a missing server or tool fails instead of skipping.
# Everything runs once; the packages whose code runs work concurrently
# (the graph runner and parallel loading, parsing, the overlay and plan
# caches in memory, the payload and plan caches on disk, the apply engine,
# the resource manager, the registry transport, the operator) run again
# under the race detector:
# their whole tests, and plan's cache tests (the rest of plan is golden
# renders of the real payload, five times slower under -race and with no
# concurrency of their own). The components are pure functions.
# The fuzzers are a soak, not a test: `make fuzz-ci` (which CI runs after
# make test) gives each target 1000 executions; the seed corpora run here
# as tests.
# hack/testsum prints what go test prints without -v (and the output of
# failed tests), the skipped tests with their reasons, and one closing line:
# N passed, N failed, N skipped.
RACE_PKGS := ./payload/... ./lib/manifest/... ./lib/overlay/... ./lib/resourceapply/... \
	./lib/imagecache/... ./lib/plancache/... ./lib/cachedir/... ./lib/registry/... ./clustersync/... \
	./operator/...
test: test-deps
	@$(GO) run ./hack/testsum \
	  -run '$(GO) test -json -tags e2e,$(TAGS) -timeout 30m ./...' \
	  -run '$(GO) test -json -race -tags e2e,$(TAGS) -timeout 30m $(RACE_PKGS)' \
	  -run '$(GO) test -json -race -tags $(TAGS) -timeout 30m -run "^(TestCache|TestLean)" ./plan'

# Three clusters (three test API servers) kept by three `payload-apply
# operator` processes whose Leases live in a fourth server, with the
# requests, CPU and memory of their steady passes (docs/operator.md); about
# 2 minutes on 2 cores.
test-fleet: test-deps
	PAYLOAD_APPLY_FLEET=1 $(GO) test -tags e2e,$(TAGS) -timeout 15m -run '^TestFleet$$' -v ./test/operator/

# A complete release (internal/gencomplete: the real payload with a CRD for
# every kind it uses that nothing serves and a Namespace for every
# namespace nothing creates) validates with no error and applies to a bare
# API server with no failure; about 20 s (35 s with the build) on 2 cores.
test-complete: test-deps
	PAYLOAD_APPLY_COMPLETE=1 $(GO) test -tags e2e,$(TAGS) -timeout 15m -run '^TestCompleteRelease$$' -v ./test/e2e/

# The operator's image, built without a container daemon: the static
# binary (CGO_ENABLED=0), and the payload baked in when PAYLOAD is set
# (an OCI layout in bin/operator-image; skopeo reads it as oci:bin/operator-image).
OPERATOR_IMAGE ?= bin/operator-image
operator-image:
	CGO_ENABLED=0 $(GO) build -tags $(TAGS) -o bin/payload-apply-static ./cmd/payload-apply
	bin/payload-apply-static operator image --binary bin/payload-apply-static $(if $(PAYLOAD),--payload $(PAYLOAD)) --output-dir $(OPERATOR_IMAGE)

unit:
	$(GO) test -race -tags $(TAGS) ./...

e2e: test-deps
	$(GO) test -tags e2e,$(TAGS) -timeout 30m -run 'E2E|e2e' ./...

verify:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./...
	@cp go.mod /tmp/payload-apply.go.mod.$$$$ && cp go.sum /tmp/payload-apply.go.sum.$$$$ && \
	  $(GO) mod tidy && \
	  if ! git diff --quiet -- go.mod go.sum; then echo "go.mod/go.sum are not tidy:"; git diff -- go.mod go.sum; \
	    cp /tmp/payload-apply.go.mod.$$$$ go.mod; cp /tmp/payload-apply.go.sum.$$$$ go.sum; exit 1; fi

# Go benchmarks, then the alternating comparisons and the scale runs
# recorded in docs/benchmarks.md: render --list against library-go's path,
# apply against kubectl and the raw limit, no-op re-applies, the live diff
# against kubectl diff,
# the 4 profiles x 5 feature sets against one render, time and peak RSS
# of render --list over generated payloads of 1 and 10 releases, and a
# release pulled from a registry rendered cold and from the cache, and
# render --list cold and from the plan cache against the reference path.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./hack/benchratio -pkg ./plan -bench BenchmarkLoadSelectGraph -rounds 7 -benchtime 3x
	$(GO) run ./hack/applybench -rounds 5
	$(GO) run ./hack/diffbench -rounds 7 -only cli,cli-cold,engine,kubectl,plan
	$(GO) run ./hack/applybench -only reapply -rounds 5 -noops 5
	$(GO) run ./hack/benchratio -pkg ./plan -bench BenchmarkRenderMatrix -a all -b one -rounds 7 -benchtime 3x
	$(GO) run ./hack/benchscale -scales 1,10 -rounds 5
	$(GO) run ./hack/pullbench -rounds 9
	$(GO) run ./hack/renderbench -rounds 11

# The same at a hundred releases (about 1 GB generated into a temporary
# directory; several minutes, 2.5 GB of memory).
bench-100x:
	$(GO) test ./plan -run '^$$' -bench BenchmarkRenderScale -benchtime 1x -benchmem -args -bench-scales 1,10,100
	$(GO) run ./hack/benchscale -scales 1,10,100 -rounds 3

# Fuzzing: every fuzz target (package:Target), each for FUZZTIME with
# FUZZPARALLEL workers. `go test -fuzz` takes one package and one target
# per run. The seed corpora (with testdata/fuzz/ regressions) run in
# `make test` too; fuzz-ci, which CI runs after `make test`, gives each target
# 1000 executions (below) and first checks that the list
# below names every Fuzz function. A crash leaves its input under the
# package's testdata/fuzz/: commit it with the fix.
FUZZ_TARGETS := \
	./lib/manifest:FuzzParse ./lib/manifest:FuzzSplitYAML ./lib/manifest:FuzzFastDecode \
	./lib/manifest:FuzzMarshalYAML ./lib/manifest:FuzzInclude ./lib/manifest:FuzzDecodeParsed \
	./payload:FuzzParseFileName ./payload:FuzzTaskGraph ./payload:FuzzRenderTemplate \
	./profiles:FuzzMerge ./lib/overlay:FuzzOverlay \
	./lib/image:FuzzFlatten ./lib/image:FuzzLoadArchive ./lib/image:FuzzOpenLayout \
	./components/nodetuning:FuzzParseCPUList ./components/nodetuning:FuzzParseHugePageSize \
	./components/nodetuning:FuzzReservedMemory ./components/nodetuning:FuzzRenderProfile \
	./lib/quantity:FuzzParse ./lib/resourceapply:FuzzKnown ./lib/jsonenc:FuzzAppend
FUZZTIME ?= 60s
FUZZPARALLEL ?= 2
# A target still running after FUZZTIMEOUT (a hanging input) fails.
FUZZTIMEOUT ?= 10m
# The fuzzer minimizes every input that finds new coverage, by default for
# up to 60 s each: with the slower targets (overlays run kustomize, image
# archives are tens of KiB) that takes the whole run. Bound it.
FUZZMINIMIZETIME ?= 5s
# FUZZJSON=-json makes the runs print test events (for hack/testsum).
FUZZJSON ?=
fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; echo "== fuzz $$pkg $$name for $(FUZZTIME)"; \
	  $(GO) test $(FUZZJSON) $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) -parallel $(FUZZPARALLEL) -timeout $(FUZZTIMEOUT) || exit 1; \
	done

# CI bounds each target by executions, not time: with a duration, Go 1.26's
# fuzz coordinator can fail a target with a bare "context deadline exceeded"
# at the end of -fuzztime, no input written (golang/go#75804, fixed in Go
# 1.27; it failed a CI run here on FuzzParseFileName). A count never takes
# that path; a hanging input still fails, at FUZZTIMEOUT.
fuzz-ci: fuzz-list
	@$(MAKE) --no-print-directory fuzz FUZZTIME=1000x FUZZMINIMIZETIME=100x

# Every func FuzzX in the module must be in FUZZ_TARGETS.
fuzz-list:
	@want=$$(git grep -h -o '^func Fuzz[A-Za-z0-9_]*' -- '*_test.go' | sed 's/^func //' | sort); \
	have=$$(for t in $(FUZZ_TARGETS); do echo $${t##*:}; done | sort); \
	if [ "$$want" != "$$have" ]; then echo "FUZZ_TARGETS names:" $$have; echo "the Fuzz functions are:" $$want; exit 1; fi

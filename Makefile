# fr-profile — the two commands of the README, plus install and bench.
#   make run    install missing system packages, build the release binaries, run `fr-profile collect`
#   make test   install what the tests need, run the whole test suite (and build and check the .deb)
#   make deb    build dist/fr-profile_<version>_<arch>.deb; make install [PREFIX=/usr/local]
#   make check-distros   install that .deb with apt into minimal bookworm and trixie roots and check it
SHELL := /bin/bash
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
PREFIX ?= /usr/local
OUT := .build-release
# SwiftPM with a TMPDIR of its own under $(OUT), removed when it ends: the Swift driver leaves
# empty TemporaryDirectory.* directories behind (scripts/private-tmp.sh), which stay out of /tmp.
SWIFTPM := scripts/private-tmp.sh $(CURDIR)/$(OUT)/tmp $(SWIFT)
BIN := $(OUT)/release/fr-profile
ARGS ?=

# Debian packages each goal needs (installed only when missing).
PKGS_BUILD := libudev-dev pkg-config libcurl4-openssl-dev libpam0g-dev libtss2-dev libqrencode-dev libfido2-dev gcc
# What the test build needs beyond that (the tests' COpenSSL): installed before it, the rest of
# PKGS_TEST beside it.
PKGS_TEST_BUILD := $(PKGS_BUILD) libssl-dev
PKGS_TEST := $(PKGS_BUILD) umockdev util-linux libssl-dev openssl curl jq git libpam-modules swtpm swtpm-tools libtss2-tcti-swtpm0 python3-jwt python3-authlib \
  pamtester libpam-wrapper openssh-server python3-paramiko gcc strace tpm2-openssl tpm2-tools rhino openjdk-17-jdk-headless python3-jsonschema python3-fido2
PKGS_BENCH_TPM := $(PKGS_BUILD) python3 swtpm swtpm-tools libtss2-tcti-swtpm0
PKGS_BENCH := $(PKGS_BENCH_TPM) gcc binutils valgrind lshw hwinfo inxi neofetch time umockdev rhino openjdk-17-jdk-headless
# Man pages (packaging/gen-docs.py), completions (swift-argument-parser's), the .deb and its checks.
PKGS_DOCS := $(PKGS_BUILD) python3 binutils gzip
PKGS_DEB := $(PKGS_DOCS) dpkg-dev fakeroot
PKGS_DEB_TEST := $(PKGS_DEB) lintian systemd man-db bash zsh fish util-linux libpam-runtime
# The .deb in minimal Debian roots (packaging/check-distros.sh): debootstrap, the loopback swtpm
# and test AM on the host, unshare/setpriv/flock.
PKGS_DISTROS := $(PKGS_DEB) debootstrap python3 swtpm util-linux

# What `--version` names: the commit the release binaries are built from ("-dirty" with local
# changes). Linked in as an object (Sources/CBuildInfo), so a new commit only relinks.
VERSION := $(shell sed -n 's/^package let frProfileVersion = "\(.*\)"/\1/p' Sources/Collectors/Version.swift)
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo -dirty)
COMMIT_OBJECT := $(CURDIR)/$(OUT)/build-commit.o
STRIP := strip --remove-section=.comment --remove-section=.note --strip-unneeded
ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB := dist/fr-profile_$(VERSION)_$(ARCH).deb
DOCS := $(OUT)/docs
# Install layout (make install; make deb sets Debian's).
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/fr-profile
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/site-functions
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d
UNITDIR ?= $(PREFIX)/lib/systemd/system
# pam_frprofile.so: <PREFIX>/lib/security for make install; the .deb uses Debian's multiarch one.
PAMDIR ?= $(PREFIX)/lib/security
# The PAM module (pam/pam_frprofile.c): small C, no Swift runtime, built with the system's cc.
# PAM_MODULE is built beside the binary for the tests (they name the helper with helper=PATH);
# install-files builds the installed one with the installed helper's path compiled in.
PAM_MODULE := $(OUT)/release/pam_frprofile.so
PAM_CFLAGS := -shared -fPIC -O2 -Wall -Wextra -Werror -D_FORTIFY_SOURCE=2 -fstack-protector-strong -Wl,-z,relro,-z,now \
  -Wl,--as-needed

# The release binary: one executable, dynamically linked against the C runtime only (libc, libm;
# libstdc++ and libgcc are linked in statically through a linker script on the -L path), with the
# Swift runtime linked in (-static-stdlib). libudev, libcurl, libtss2 and libpam are loaded
# with dlopen by the command that needs them (Sources/CUdev, CCurl, CTSS2, CPAM), so the .deb
# Depends on libc6 alone and one .deb installs on Debian 12 and 13 (docs/install.md).
# -no-pie: a position-independent binary makes the dynamic loader apply 57,462 relative
# relocations (the Swift metadata's absolute pointers) at every start, 0.75 M instructions, more
# than the whole collect; without PIE collect runs 0.62 M instead of 1.37 M instructions and
# 32-37 % faster (bench/collect_bench.py --extra, two interleaved runs of 500 rounds; README
# "Benchmark"). The price is no ASLR for the executable's own code and data (libraries, heap and
# stack are still randomised); packaging/lintian/fr-profile says so to lintian.
# No $ORIGIN rpath (no library ships beside the binary). --no-export-dynamic: nothing loads
# symbols from the executable, and the Swift runtime's start-up dladdr() otherwise scans ~100k
# exported symbols. The trait SymbolOrdering links it with lld and bench/collect-order.txt (from
# bench/collect-order.sh), which puts the functions collect runs, and the data it touches, next
# to each other (bench/README.md). `-Xfrontend -function-sections` (a hidden frontend flag)
# puts every Swift function in a section of its own, as C's -ffunction-sections does, so the
# ordering file can move them. `-z separate-loadable-segments --image-base=0x800000` keeps every
# segment's file offset congruent to its address modulo 2 MiB, so page-cache folios line up with
# the kernel's fault-around windows (peak RSS; bench/README.md "Peak RSS"). Both move code, never
# change it: bench/release-golden.sh (run by `make check-deb`, so by `make test`, and by `make
# bench`) compares the output byte for byte.
# Only compile flags are on the command line; every link flag above is a linker setting of the
# fr-profile target in Package.swift (release, trait SymbolOrdering; the linker script and the
# commit object are made by release-inputs). So `make test` builds the suite with BUILD_RELEASE
# in the same scratch path and shares every object with the shipped binary: one build of the
# package, not a debug and a release one (docs/development.md "One build").
BUILD_RELEASE := -c release --traits SymbolOrdering --scratch-path $(OUT) --disable-local-rpath \
  -Xswiftc -Xfrontend -Xswiftc -function-sections
RELEASE_FLAGS := $(BUILD_RELEASE) --product fr-profile
BIN_DIR := $(OUT)/release

# The toolchain's swift-format with the repo's .swift-format; `swift format --in-place --recursive
# Sources Tests Fuzz Package.swift` fixes what it reports.
# scripts/lint-tests.py: no test may end in a `guard case … else { return }` that passes when
# the code under test takes the wrong branch (issue 19).
# scripts/check-schemas.py: every schema against the metaschema and every committed document
# against its schema, with Debian's python3-jsonschema (the tests check the outputs they make).
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Fuzz Examples Package.swift
	python3 scripts/lint-tests.py Tests
	/usr/bin/python3 scripts/check-schemas.py
	$(SWIFTPM) package --scratch-path $(OUT) dump-package > $(OUT)/package.json
	python3 scripts/check-layers.py $(OUT)/package.json

.PHONY: pam-module lint run test build release install install-files man completions docs api-docs deb check-deb check-installed \
  check-distros bench bench-tpm resolve test-build test-suite test-package test-distro-roots test-installed test-distros test-examples \
  check-installed-only suite test-deps deps-test-build deps-test-all test-lint test-fuzz test-fuzz-build release-inputs deps-build deps-bench deps-bench-tpm deps-docs deps-deb deps-deb-test deps-distros clean \
  fuzz fuzz-build fuzz-replay-corpus

# In-process libFuzzer targets (docs/development.md "Fuzzing"): `make fuzz` runs each for
# FUZZ_SECONDS; `make test` replays the seed corpus and runs each for FUZZ_TEST_SECONDS. The trait
# Fuzzing compiles our targets with -sanitize=fuzzer,address (Package.swift); the dependencies keep
# the objects of the ordinary build of the same configuration and flags, so BoringSSL is not
# compiled again. Release (the default) fuzzes in $(OUT), beside `make release` and `make test`'s
# build, whose objects of our modules it replaces (a later `make release` compiles them back);
# FUZZ_CONFIGURATION=debug fuzzes beside `make build` in .build.
FUZZ_TARGETS := fuzz-json fuzz-replay fuzz-stored-reader fuzz-device-matcher fuzz-journey-step fuzz-callback-answerer fuzz-tpm-wire fuzz-event-log
FUZZ_SECONDS ?= 600
FUZZ_TEST_SECONDS ?= 10
FUZZ_CONFIGURATION ?= release
# Targets fuzzed at once (one core each).
FUZZ_JOBS ?= 1
# Nothing on the command line but the trait and the flags of the ordinary build: another -Xswiftc
# flag would change every compile job and rebuild the Swift dependencies too (Package.swift links
# the fuzz targets with lld).
FUZZ_FLAGS := $(if $(filter release,$(FUZZ_CONFIGURATION)),$(subst SymbolOrdering,Fuzzing,$(BUILD_RELEASE)),-c debug --traits Fuzzing)
FUZZ_BIN := $(if $(filter release,$(FUZZ_CONFIGURATION)),$(BIN_DIR),.build/debug)

# No service a package installs is started (openssh-server's sshd on port 22, above all): a
# policy-rc.d that refuses every start (exit 101), which invoke-rc.d and deb-systemd-invoke both
# ask, for the apt run only; one already there (Docker images have one) is left as it is.
define ensure_packages
	@missing=""; for p in $(1); do dpkg -s "$$p" >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  policy=/usr/sbin/policy-rc.d; \
	  if [ ! -e $$policy ]; then \
	    printf '#!/bin/sh\n# make: no service starts during its apt run\nexit 101\n' | $$sudo tee $$policy >/dev/null \
	      && $$sudo chmod 755 $$policy && trap '$$sudo rm -f '$$policy EXIT; \
	  fi; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi
endef

deps-build:
	$(call ensure_packages,$(PKGS_BUILD))

deps-test-build:
	$(call ensure_packages,$(PKGS_TEST_BUILD))

# Every package of make test's phases in one apt run: make test runs phases with -j, and two
# apt-get runs at once fail on apt's lock (found on a fresh Debian 12 root, 2026-11-27).
deps-test-all:
	$(call ensure_packages,$(sort $(PKGS_TEST) $(PKGS_DEB_TEST) $(PKGS_DISTROS)))

deps-bench:
	$(call ensure_packages,$(PKGS_BENCH))

deps-bench-tpm:
	$(call ensure_packages,$(PKGS_BENCH_TPM))

deps-docs:
	$(call ensure_packages,$(PKGS_DOCS))

deps-deb:
	$(call ensure_packages,$(PKGS_DEB))

deps-deb-test:
	$(call ensure_packages,$(PKGS_DEB_TEST))

deps-distros:
	$(call ensure_packages,$(PKGS_DISTROS))

# A throwaway state directory unless STATE_DIR is given: `make run` as root must not create the
# real device key in /var/lib/fr-profile. The real one: `sudo fr-profile collect` once installed.
STATE_DIR ?= $(CURDIR)/$(OUT)/run-state
run: release
	FR_PROFILE_HOME="$(STATE_DIR)" $(BIN) collect $(ARGS)

release: release-inputs
	$(if $(RELEASE_BUILT),@echo "release: $(BIN) is the one make test built",$(SWIFTPM) build $(RELEASE_FLAGS))

pam-module: $(PAM_MODULE)
$(PAM_MODULE): pam/pam_frprofile.c
	@mkdir -p $(dir $@)
	gcc $(PAM_CFLAGS) -o $@ $< -lpam

# What fr-profile's release linker settings name (Package.swift): the linker script that links
# libstdc++ statically and the object holding the commit. SwiftPM tracks neither, nor the
# ordering file: a new one removes the binary so that it is linked again.
release-inputs: deps-build
	@mkdir -p $(OUT)/stdcxx
	@echo "INPUT($$(gcc -print-file-name=libstdc++.a))" > $(OUT)/stdcxx/libstdc++.so
	@printf 'const char fr_profile_build_commit[] = "%s";\n' '$(COMMIT)' > $(OUT)/build-commit.c.new
	@if ! cmp -s $(OUT)/build-commit.c.new $(OUT)/build-commit.c || [ ! -f $(COMMIT_OBJECT) ]; then \
	  mv $(OUT)/build-commit.c.new $(OUT)/build-commit.c; gcc -c -o $(COMMIT_OBJECT) $(OUT)/build-commit.c; \
	  rm -f $(BIN); \
	fi
	@if [ bench/collect-order.txt -nt $(BIN) ]; then rm -f $(BIN); fi

build: deps-build
	$(SWIFTPM) build

# One build (docs/development.md "One build"): the suite, the fuzzers and the .deb all come from
# the release build in $(OUT). The test build (BUILD_RELEASE --build-tests) links the shipped
# fr-profile itself, so the .deb's release step builds nothing (RELEASE_BUILT); the fuzz build
# then recompiles our modules with the trait Fuzzing there (not the dependencies), beside the
# suite, which runs the test bundle directly (`make suite`) rather than holding SwiftPM's lock.
# Each phase is timed (scripts/timed.sh) and the times are printed at the end: CI's output says
# where its minutes went (wall clock and CPU seconds per phase). On CI's two cores no phase after
# the build keeps both cores busy (the suite waits on swtpm, Java and servers; debootstrap waits
# on the mirror), so phases run side by side (make -j4): lint and the Debian roots of
# check-distros beside the build; after it the .deb's checks, the suite, and the fuzz build
# followed by the fuzzers; then check-installed beside check-distros. The build's packages are
# installed first, every other package any phase needs beside the build, in one apt run (apt
# cannot run twice at once) that the later phases wait for. Lines are prefixed with their phase.
TIMES := $(OUT)/test-times
TIMED := scripts/timed.sh $(TIMES)
test:
	@$(TIMED) --start
	@$(TIMED) deps-build $(MAKE) --no-print-directory deps-test-build
	@$(TIMED) resolve $(MAKE) --no-print-directory resolve
	@$(MAKE) --no-print-directory -j4 test-deps test-lint test-suite test-fuzz test-package test-distro-roots test-examples \
	  || { $(TIMED) --failures; exit 1; }
	@$(MAKE) --no-print-directory -j2 test-installed test-distros || { $(TIMED) --failures; exit 1; }
	@$(TIMED) --summary

resolve: deps-build
	$(SWIFTPM) package --scratch-path $(OUT) resolve

# The phases of `make test` (not meant to be run alone). Only the build's packages are installed
# before the build; the rest beside it, before any phase that needs them (on a fresh Debian 12
# minbase root, apt-get update and the install of every package make test names took 77 s).
test-deps:
	@$(TIMED) deps $(MAKE) --no-print-directory deps-test-all
test-lint: test-deps
	@$(TIMED) lint $(MAKE) --no-print-directory lint
# The PAM module after the build: on a fresh scratch SwiftPM replaces $(OUT)/release (where the
# tests find the module, beside the binary) with a link to its own directory.
test-build: deps-test-build release-inputs
	@$(TIMED) build-tests $(SWIFTPM) build $(BUILD_RELEASE) --build-tests
	@$(MAKE) --no-print-directory pam-module
test-fuzz-build: test-build test-deps
	@$(TIMED) fuzz-replay-corpus $(MAKE) --no-print-directory fuzz-replay-corpus
	@$(TIMED) fuzz-build $(MAKE) --no-print-directory fuzz-build
test-suite: test-build test-deps
	@$(TIMED) swift-test $(MAKE) --no-print-directory suite
test-fuzz: test-fuzz-build
	@$(TIMED) fuzz env FUZZ_JOBS=1 Fuzz/run.sh $(FUZZ_TEST_SECONDS) $(FUZZ_BIN) $(FUZZ_TARGETS)
# The embedder examples (Examples/Embedders) build in a scratch directory of their own, run, and
# link neither Collectors nor libudev (scripts/check-examples.sh).
test-examples: test-build test-deps
	@$(TIMED) examples env SWIFT=$(SWIFT) scripts/check-examples.sh $(BIN)
	@$(TIMED) api-docs env SWIFT=$(SWIFT) scripts/api-docs.sh $(OUT)/release/Modules $(OUT)/api-docs
test-package: test-build test-deps
	@$(TIMED) check-deb $(MAKE) --no-print-directory check-deb RELEASE_BUILT=yes
test-distro-roots: test-deps
	@$(TIMED) distro-roots packaging/check-distros.sh --roots-only $(OUT)/distros $(DISTROS)
test-installed:
	@$(TIMED) check-installed $(MAKE) --no-print-directory check-installed-only
test-distros:
	@$(TIMED) check-distros packaging/check-distros.sh $(DEB) $(OUT)/distros $(DISTROS)

# The built suite's two passes as `swift test --skip-build` runs them (XCTest, which has no test
# today, then Swift Testing), without SwiftPM: `swift test` holds the scratch path's lock while
# the tests run, and in `make test` the fuzz build runs beside the suite in the same scratch path.
# It compiles our modules again, never the test bundle or the executables the tests run.
# NO_COLOR=1: as `swift test` sets it (no escape codes in CI's log).
TEST_BUNDLE := $(BIN_DIR)/fr-profilePackageTests.xctest
suite:
	NO_COLOR=1 $(TEST_BUNDLE)
	NO_COLOR=1 $(TEST_BUNDLE) --testing-library swift-testing

# Every seed and every past crash through each target, without sanitizers (the ordinary build).
fuzz-replay-corpus:
	@for t in $(FUZZ_TARGETS); do "$(BIN_DIR)/$$t" Fuzz/Corpus/$$t || exit 1; done

fuzz-build: $(if $(filter release,$(FUZZ_CONFIGURATION)),release-inputs,deps-build)
	@for t in $(FUZZ_TARGETS); do $(SWIFTPM) build $(FUZZ_FLAGS) --product $$t || exit 1; done

fuzz: fuzz-build
	FUZZ_JOBS=$(FUZZ_JOBS) Fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BIN) $(FUZZ_TARGETS)

install: release man install-files

# `make docs`: the man pages and completions, and the library documentation (DocC archives).
docs: man api-docs

# Man pages and completions from the release binaries' own help (packaging/gen-docs.py).
man: deps-docs release
	python3 packaging/gen-docs.py $(BIN) $(DOCS) \
	  "$$(date -u -d @$$(git log -1 --format=%ct 2>/dev/null || date +%s) +%Y-%m-%d)"
	mkdir -p $(DOCS)/completions
	$(BIN) --generate-completion-script bash > $(DOCS)/completions/fr-profile.bash
	$(BIN) --generate-completion-script zsh > $(DOCS)/completions/_fr-profile
	$(BIN) --generate-completion-script fish > $(DOCS)/completions/fr-profile.fish
completions: man

# One DocC archive per library product in $(OUT)/api-docs, from the release build's modules
# (scripts/api-docs.sh; DocC's warnings are errors). install and deb do not wait for it.
api-docs: release
	env SWIFT=$(SWIFT) scripts/api-docs.sh $(OUT)/release/Modules $(OUT)/api-docs

# The installed set; stripped binaries (debug info is ~4/5 of their size).
install-files:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/fr-profile $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DOCDIR) \
	  $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) $(DESTDIR)$(UNITDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/fr-profile
	$(STRIP) $(DESTDIR)$(BINDIR)/fr-profile
	install -d $(DESTDIR)$(PAMDIR)
	gcc $(PAM_CFLAGS) -DFRPROFILE_HELPER='"$(BINDIR)/fr-profile"' -o $(DESTDIR)$(PAMDIR)/pam_frprofile.so pam/pam_frprofile.c -lpam
	chmod 0644 $(DESTDIR)$(PAMDIR)/pam_frprofile.so
	$(STRIP) $(DESTDIR)$(PAMDIR)/pam_frprofile.so
	install -D -m 0644 packaging/pam/frprofile $(DESTDIR)$(DATADIR)/pam-configs/frprofile
	install -D -m 0644 packaging/pam/frprofile-session $(DESTDIR)$(DATADIR)/pam-configs/frprofile-session
	install -d $(DESTDIR)$(MANDIR)/man8
	gzip -9n < packaging/man/pam_frprofile.8 > $(DESTDIR)$(MANDIR)/man8/pam_frprofile.8.gz
	chmod 0644 $(DESTDIR)$(MANDIR)/man8/pam_frprofile.8.gz
	install -D -m 0644 packaging/signin/signin.json.example $(DESTDIR)$(DOCDIR)/examples/signin.json
	install -m 0644 match-config.json $(DESTDIR)$(DATADIR)/fr-profile/match-config.json
	install -D -m 0644 am/fr-tpm-attestation.js $(DESTDIR)$(DATADIR)/fr-profile/am/fr-tpm-attestation.js
	install -D -m 0644 am/fr-posture.js $(DESTDIR)$(DATADIR)/fr-profile/am/fr-posture.js
	for page in $(DOCS)/man/man1/*.1; do gzip -9n < $$page > $(DESTDIR)$(MANDIR)/man1/$${page##*/}.gz; \
	  chmod 0644 $(DESTDIR)$(MANDIR)/man1/$${page##*/}.gz; done
	install -m 0644 $(DOCS)/completions/fr-profile.bash $(DESTDIR)$(BASHCOMPDIR)/fr-profile
	install -m 0644 $(DOCS)/completions/_fr-profile $(DESTDIR)$(ZSHCOMPDIR)/_fr-profile
	install -m 0644 $(DOCS)/completions/fr-profile.fish $(DESTDIR)$(FISHCOMPDIR)/
	for unit in packaging/systemd/*; do sed 's|@BINDIR@|$(BINDIR)|g' $$unit > $(DESTDIR)$(UNITDIR)/$${unit##*/}; \
	  chmod 0644 $(DESTDIR)$(UNITDIR)/$${unit##*/}; done
	gzip -9n < CHANGELOG.md > $(DESTDIR)$(DOCDIR)/CHANGELOG.md.gz
	install -m 0644 README.md LICENSE $(DESTDIR)$(DOCDIR)/
	chmod 0644 $(DESTDIR)$(DOCDIR)/CHANGELOG.md.gz

# The Debian package: Debian's layout, Depends from the binary (dpkg-shlibdeps: libc6 at the
# version its symbols need), the dlopened libraries as Recommends (packaging/debian/control.in).
deb: deps-deb release man
	rm -rf $(OUT)/deb && mkdir -p $(OUT)/deb/root/DEBIAN $(OUT)/deb/debian dist
	$(MAKE) --no-print-directory install-files DESTDIR=$(CURDIR)/$(OUT)/deb/root PREFIX=/usr \
	  UNITDIR=/lib/systemd/system ZSHCOMPDIR=/usr/share/zsh/vendor-completions \
	  PAMDIR=/usr/lib/$$(dpkg-architecture -qDEB_HOST_MULTIARCH)/security
	rm $(OUT)/deb/root/usr/share/doc/fr-profile/README.md $(OUT)/deb/root/usr/share/doc/fr-profile/LICENSE
	install -m 0644 packaging/debian/copyright $(OUT)/deb/root/usr/share/doc/fr-profile/copyright
	install -D -m 0644 packaging/lintian/fr-profile $(OUT)/deb/root/usr/share/lintian/overrides/fr-profile
	gzip -9n < packaging/debian/changelog > $(OUT)/deb/root/usr/share/doc/fr-profile/changelog.gz
	chmod 0644 $(OUT)/deb/root/usr/share/doc/fr-profile/changelog.gz
	printf 'Source: fr-profile\n\nPackage: fr-profile\nArchitecture: any\n' > $(OUT)/deb/debian/control
	cd $(OUT)/deb && dpkg-shlibdeps -O root/usr/bin/fr-profile \
	  | sed -n 's/^shlibs:Depends=//p' > depends
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@ARCH@|$(ARCH)|' -e "s|@DEPENDS@|$$(cat $(OUT)/deb/depends)|" \
	  -e "s|@SIZE@|$$(du -sk --exclude=DEBIAN $(OUT)/deb/root | cut -f1)|" \
	  packaging/debian/control.in > $(OUT)/deb/root/DEBIAN/control
	cd $(OUT)/deb/root && find usr lib -type f -exec md5sum {} + | sort -k2 > DEBIAN/md5sums
	dpkg-deb --root-owner-group -Zxz --build $(OUT)/deb/root $(DEB)
	@ls -l $(DEB)

# Builds the .deb and checks it: lintian, file list, dpkg install/run/remove in a temporary
# root, man pages against --help, completions, systemd-analyze verify.
check-deb: deps-deb-test deb
	bench/release-golden.sh $(BIN)
	packaging/check-deb.sh $(DEB)
	@# make install's layout: PREFIX/lib/security/pam_frprofile.so, naming PREFIX/bin/fr-profile.
	rm -rf $(OUT)/install-check && $(MAKE) --no-print-directory install-files DESTDIR=$(CURDIR)/$(OUT)/install-check PREFIX=/opt/frp >/dev/null
	test -f $(OUT)/install-check/opt/frp/lib/security/pam_frprofile.so
	grep -q /opt/frp/bin/fr-profile $(OUT)/install-check/opt/frp/lib/security/pam_frprofile.so
	test -x $(OUT)/install-check/opt/frp/bin/fr-profile && rm -rf $(OUT)/install-check
	@echo "check-deb: ok: make install PREFIX=/opt/frp puts pam_frprofile.so in /opt/frp/lib/security, naming /opt/frp/bin/fr-profile"

# The udev (umockdev) and golden CLI tests again, against the binary the .deb installs rather
# than the build tree's: the dynamically linked release binary is what umockdev's LD_PRELOAD must
# reach on users' machines, and the installed one is stripped.
check-installed: deb
	$(SWIFTPM) build $(BUILD_RELEASE) --build-tests
	$(MAKE) --no-print-directory check-installed-only

# The test build as it is (make test: the fuzz build has since recompiled our modules with
# sanitizers, and a build here would compile them back; the linked test bundle is what the suite
# ran), run directly as `make suite` runs it: `swift test --skip-build` left five empty
# /tmp/TemporaryDirectory.* and three SwiftPM lock files in /tmp (the tests are Swift Testing's).
check-installed-only:
	rm -rf $(OUT)/installed && mkdir -p $(OUT)/installed
	dpkg-deb -x $(DEB) $(OUT)/installed
	FR_PROFILE_BIN_DIR=$(CURDIR)/$(OUT)/installed/usr/bin NO_COLOR=1 $(TEST_BUNDLE) --testing-library swift-testing \
	  --filter 'UdevCommandTests|CollectCommandTests|OptionalLibraryTests'

# The .deb installed by apt (Recommends on) into a debootstrap --variant=minbase root of each
# release in DISTROS, then checked there: Depends/Recommends bring every library the binaries
# name, --version, the dynamic link, collect, identifier, match, journey against a loopback test
# AM, keys list, a TPM identity on a loopback swtpm, collect under umockdev, release-golden.sh.
# Needs root and the Debian mirror. The roots are cached in $(OUT)/distros (~300 MB each):
# the first run costs 30-100 s per release (debootstrap, mostly download), later runs 5-7 s.
DISTROS ?= bookworm trixie
check-distros: deps-distros deb
	packaging/check-distros.sh $(DEB) $(OUT)/distros $(DISTROS)

# FASTFETCH=/path/to/fastfetch adds fastfetch to the collect benchmark (Debian 12 has no package).
bench: deps-bench release
	bench/release-golden.sh $(BIN)
	python3 bench/collect_bench.py --binary $(BIN) --peers $(if $(FASTFETCH),--fastfetch $(FASTFETCH))
	bench/udev-bench.sh $(BIN)
	FR_PROFILE=$(BIN) bench/match-bench.sh
	python3 bench/tpm_commands.py bench --fr-profile $(BIN) --check
	MAX_MS=50 Tests/TPMAttestationTests/Fixtures/bootquote/time-am-script.sh Tests/TPMAttestationTests/Fixtures/bootquote/corpus/*.json

# TPM commands per operation (issue 31) through a decoding proxy in front of swtpm set up like a
# PC, with and without a persistent SRK, beside the issue's goals; exit 1 when one is missed or a
# PIN-derived byte crosses in clear. Counts, not times: the debug build serves (bench/README.md).
bench-tpm: deps-bench-tpm build
	python3 bench/tpm_commands.py bench --fr-profile .build/debug/fr-profile --check

clean:
	rm -rf .build $(OUT) dist

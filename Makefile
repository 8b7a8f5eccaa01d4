# fr-profile — the two commands of the README, plus install and bench.
#   make run    install missing system packages, build the release binaries, run `fr-profile collect`
#   make test   install what the tests need, run the whole test suite (and build and check the .deb)
#   make deb    build dist/fr-profile_<version>_<arch>.deb; make install [PREFIX=/usr/local]
#   make check-distros   install that .deb with apt into minimal bookworm and trixie roots and check it
SHELL := /bin/bash
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
PREFIX ?= /usr/local
STATIC := .build-static
BIN := $(STATIC)/release/fr-profile
ARGS ?=

# Debian packages each goal needs (installed only when missing).
PKGS_BUILD := libudev-dev pkg-config libcurl4-openssl-dev libpam0g-dev libtss2-dev
PKGS_TEST := $(PKGS_BUILD) umockdev util-linux libssl-dev openssl curl jq libpam-modules swtpm swtpm-tools libtss2-tcti-swtpm0
PKGS_BENCH := $(PKGS_BUILD) gcc binutils valgrind lshw hwinfo inxi neofetch python3 time umockdev
# Man pages and completions (packaging/gen-docs.py), the .deb and its checks (packaging/check-deb.sh).
PKGS_DOCS := $(PKGS_BUILD) python3 binutils gzip
PKGS_DEB := $(PKGS_DOCS) dpkg-dev fakeroot
PKGS_DEB_TEST := $(PKGS_DEB) lintian systemd man-db bash zsh fish util-linux
# The .deb in minimal Debian roots (packaging/check-distros.sh): debootstrap, the loopback swtpm
# and test AM on the host, unshare/setpriv/flock.
PKGS_DISTROS := $(PKGS_DEB) debootstrap python3 swtpm util-linux

# What `--version` names: the commit the release binaries are built from ("-dirty" with local
# changes). Linked in as an object (Sources/CBuildInfo), so a new commit only relinks.
VERSION := $(shell sed -n 's/^package let frProfileVersion = "\(.*\)"/\1/p' Sources/Collectors/Version.swift)
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo -dirty)
COMMIT_OBJECT := $(CURDIR)/$(STATIC)/build-commit.o
STRIP := strip --remove-section=.comment --remove-section=.note --strip-unneeded
ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB := dist/fr-profile_$(VERSION)_$(ARCH).deb
DOCS := $(STATIC)/docs
# The glibc fr-profile is statically linked with: the .deb depends on this release (below the next
# one) and names it in Built-Using, because a static glibc dlopens libudev only with its own version.
GLIBC_NEXT = $(shell ldd --version | awk 'NR == 1 { split($$NF, v, "."); print v[1] "." v[2] + 1 }')
GLIBC_SOURCE = $(shell dpkg-query -W -f='$${source:Version}' libc6-dev 2>/dev/null)

# Install layout (make install; make deb sets Debian's).
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/fr-profile
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/site-functions
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d
UNITDIR ?= $(PREFIX)/lib/systemd/system

# The fastest start-up measured on this machine (README "Benchmark"). fr-profile is linked fully
# statically (static glibc, libm, Swift runtime, libstdc++ and libgcc): the dynamic loader then
# maps and relocates nothing at start, which was a fifth of a collect. libudev, which ships no
# static library, is loaded with dlopen only on a machine that has drm, video4linux or bluetooth
# (Sources/CUdev); a statically linked glibc can dlopen only its own version's libraries, so the
# .deb depends on exactly this glibc release (packaging/debian/control.in). Those link flags are
# fr-profile's linkerSettings in Package.swift, enabled by the trait StaticExecutable: both
# executables are compiled with the same flags in one build directory (SwiftPM recompiles
# everything when -Xswiftc flags change), and fr-profile-journey, which needs libcurl, libpam and
# libtss2, is linked dynamically: static Swift stdlib, no PIE, static libgcc and libstdc++ (via a
# linker script on the -L path). No $ORIGIN rpath (no library ships beside the binaries).
# --no-export-dynamic: nothing loads symbols from the executable, and the Swift runtime's start-up
# dladdr() otherwise scans ~100k exported symbols. fr-profile is linked by lld with a symbol
# ordering file (bench/collect-order.txt, from bench/collect-order.sh) that puts the functions
# collect runs next to each other, glibc's included, and the data objects it touches next to each
# other, which cut its page faults from 117 to 93 (README "Benchmark"); gold's section ordering
# could not move glibc's functions, whose sections are all named .text, nor order data. It moves
# code and data, never changes them, and bench/release-golden.sh (run by `make check-deb`, so by
# `make test`, and by `make bench`) checks the release binary's golden profiles.
# `-Xfrontend -function-sections` (a hidden frontend flag) puts every Swift function in a section
# of its own, as C's -ffunction-sections does; without it only a few (linkonce) functions had
# one, so the ordering file could move almost none of ours and collect's code stayed spread over
# the binary. It moves code, never changes it: release-golden.sh compares the output byte for byte.
RELEASE_COMMON := -c release --traits StaticExecutable --scratch-path $(STATIC) --static-swift-stdlib \
  --disable-local-rpath -Xswiftc -Xfrontend -Xswiftc -function-sections \
  -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -Xclang-linker -Xswiftc -static-libgcc \
  -Xlinker -L$(CURDIR)/$(STATIC)/stdcxx -Xlinker $(COMMIT_OBJECT) -Xlinker --no-export-dynamic
RELEASE_FLAGS := $(RELEASE_COMMON) --product fr-profile
JOURNEY_FLAGS := $(RELEASE_COMMON) --product fr-profile-journey

# The toolchain's swift-format with the repo's .swift-format; `swift format --in-place --recursive
# Sources Tests Fuzz Package.swift` fixes what it reports.
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Fuzz Package.swift

.PHONY: lint run test build release install install-files man completions docs deb check-deb check-distros bench \
  deps-build deps-test deps-bench deps-docs deps-deb deps-deb-test deps-distros clean \
  fuzz fuzz-build fuzz-replay-corpus

# In-process libFuzzer targets (README "Fuzzing"): `make fuzz` runs each for FUZZ_SECONDS;
# `make test` replays the seed corpus and runs each for FUZZ_TEST_SECONDS.
FUZZ_TARGETS := fuzz-json fuzz-replay fuzz-stored-reader fuzz-device-matcher fuzz-journey-step fuzz-callback-answerer
FUZZ_SECONDS ?= 600
FUZZ_TEST_SECONDS ?= 20
# lld (shipped with the toolchain): gold fails on these binaries' debug info.
FUZZ_FLAGS := -c release --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
  -Xswiftc -DFUZZING -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld

define ensure_packages
	@missing=""; for p in $(1); do dpkg -s "$$p" >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi
endef

deps-build:
	$(call ensure_packages,$(PKGS_BUILD))

deps-test:
	$(call ensure_packages,$(PKGS_TEST))

deps-bench:
	$(call ensure_packages,$(PKGS_BENCH))

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
STATE_DIR ?= $(CURDIR)/$(STATIC)/run-state
run: release
	FR_PROFILE_HOME="$(STATE_DIR)" $(BIN) collect $(ARGS)

release: deps-build
	@mkdir -p $(STATIC)/stdcxx
	@echo "INPUT($$(gcc -print-file-name=libstdc++.a))" > $(STATIC)/stdcxx/libstdc++.so
	@printf 'const char fr_profile_build_commit[] = "%s";\n' '$(COMMIT)' > $(STATIC)/build-commit.c.new
	@if ! cmp -s $(STATIC)/build-commit.c.new $(STATIC)/build-commit.c || [ ! -f $(COMMIT_OBJECT) ]; then \
	  mv $(STATIC)/build-commit.c.new $(STATIC)/build-commit.c; gcc -c -o $(COMMIT_OBJECT) $(STATIC)/build-commit.c; \
	  rm -f $(STATIC)/release/fr-profile $(STATIC)/release/fr-profile-journey; \
	fi
	@# SwiftPM does not see the ordering file: a newer one must relink fr-profile.
	@if [ bench/collect-order.txt -nt $(BIN) ]; then rm -f $(BIN); fi
	$(SWIFT) build $(RELEASE_FLAGS)
	$(SWIFT) build $(JOURNEY_FLAGS)

build: deps-build
	$(SWIFT) build

test: deps-test lint
	$(SWIFT) build --build-tests
	$(SWIFT) test
	$(MAKE) fuzz-replay-corpus
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_TEST_SECONDS)
	$(MAKE) check-deb

# Every seed and every past crash through each target, without sanitizers (the debug build).
fuzz-replay-corpus:
	@bin=$$($(SWIFT) build --show-bin-path); for t in $(FUZZ_TARGETS); do "$$bin/$$t" Fuzz/Corpus/$$t || exit 1; done

fuzz-build: deps-build
	@for t in $(FUZZ_TARGETS); do $(SWIFT) build $(FUZZ_FLAGS) --product $$t || exit 1; done

fuzz: fuzz-build
	Fuzz/run.sh $(FUZZ_SECONDS) "$$($(SWIFT) build $(FUZZ_FLAGS) --show-bin-path)" $(FUZZ_TARGETS)

install: release docs install-files

# Man pages and completions from the release binaries' own help (packaging/gen-docs.py).
docs: deps-docs release
	python3 packaging/gen-docs.py $(BIN) $(STATIC)/release/fr-profile-journey $(DOCS) \
	  "$$(date -u -d @$$(git log -1 --format=%ct 2>/dev/null || date +%s) +%Y-%m-%d)"
man completions: docs

# The installed set; stripped binaries (debug info is ~4/5 of their size).
install-files:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/fr-profile $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DOCDIR) \
	  $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) $(DESTDIR)$(UNITDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/fr-profile
	install -m 0755 $(STATIC)/release/fr-profile-journey $(DESTDIR)$(BINDIR)/fr-profile-journey
	$(STRIP) $(DESTDIR)$(BINDIR)/fr-profile $(DESTDIR)$(BINDIR)/fr-profile-journey
	install -m 0644 match-config.json $(DESTDIR)$(DATADIR)/fr-profile/match-config.json
	for page in $(DOCS)/man/man1/*.1; do gzip -9n < $$page > $(DESTDIR)$(MANDIR)/man1/$${page##*/}.gz; \
	  chmod 0644 $(DESTDIR)$(MANDIR)/man1/$${page##*/}.gz; done
	install -m 0644 $(DOCS)/completions/fr-profile.bash $(DESTDIR)$(BASHCOMPDIR)/fr-profile
	ln -sf fr-profile $(DESTDIR)$(BASHCOMPDIR)/fr-profile-journey
	install -m 0644 $(DOCS)/completions/_fr-profile $(DESTDIR)$(ZSHCOMPDIR)/_fr-profile
	install -m 0644 $(DOCS)/completions/fr-profile.fish $(DOCS)/completions/fr-profile-journey.fish $(DESTDIR)$(FISHCOMPDIR)/
	for unit in packaging/systemd/*; do sed 's|@BINDIR@|$(BINDIR)|g' $$unit > $(DESTDIR)$(UNITDIR)/$${unit##*/}; \
	  chmod 0644 $(DESTDIR)$(UNITDIR)/$${unit##*/}; done
	gzip -9n < CHANGELOG.md > $(DESTDIR)$(DOCDIR)/CHANGELOG.md.gz
	install -m 0644 README.md LICENSE $(DESTDIR)$(DOCDIR)/
	chmod 0644 $(DESTDIR)$(DOCDIR)/CHANGELOG.md.gz

# The Debian package: Debian's layout, Depends from the binaries (dpkg-shlibdeps), no network.
deb: deps-deb release docs
	rm -rf $(STATIC)/deb && mkdir -p $(STATIC)/deb/root/DEBIAN $(STATIC)/deb/debian dist
	$(MAKE) --no-print-directory install-files DESTDIR=$(CURDIR)/$(STATIC)/deb/root PREFIX=/usr \
	  UNITDIR=/lib/systemd/system ZSHCOMPDIR=/usr/share/zsh/vendor-completions
	rm $(STATIC)/deb/root/usr/share/doc/fr-profile/README.md $(STATIC)/deb/root/usr/share/doc/fr-profile/LICENSE
	install -m 0644 packaging/debian/copyright $(STATIC)/deb/root/usr/share/doc/fr-profile/copyright
	install -D -m 0644 packaging/lintian/fr-profile $(STATIC)/deb/root/usr/share/lintian/overrides/fr-profile
	gzip -9n < packaging/debian/changelog > $(STATIC)/deb/root/usr/share/doc/fr-profile/changelog.gz
	chmod 0644 $(STATIC)/deb/root/usr/share/doc/fr-profile/changelog.gz
	printf 'Source: fr-profile\n\nPackage: fr-profile\nArchitecture: any\n' > $(STATIC)/deb/debian/control
	@# fr-profile is statically linked (no shared libraries to analyse): its glibc pin is in control.in.
	cd $(STATIC)/deb && dpkg-shlibdeps -O root/usr/bin/fr-profile-journey \
	  | sed -n 's/^shlibs:Depends=//p' > depends
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@ARCH@|$(ARCH)|' -e "s|@DEPENDS@|$$(cat $(STATIC)/deb/depends)|" \
	  -e 's|@GLIBC_NEXT@|$(GLIBC_NEXT)|' -e 's|@GLIBC_SOURCE@|$(GLIBC_SOURCE)|' \
	  -e "s|@SIZE@|$$(du -sk --exclude=DEBIAN $(STATIC)/deb/root | cut -f1)|" \
	  packaging/debian/control.in > $(STATIC)/deb/root/DEBIAN/control
	cd $(STATIC)/deb/root && find usr lib -type f -exec md5sum {} + | sort -k2 > DEBIAN/md5sums
	dpkg-deb --root-owner-group -Zxz --build $(STATIC)/deb/root $(DEB)
	@ls -l $(DEB)

# Builds the .deb and checks it: lintian, file list, dpkg install/run/remove in a temporary
# root, man pages against --help, completions, systemd-analyze verify.
check-deb: deps-deb-test deb
	bench/release-golden.sh $(BIN)
	packaging/check-deb.sh $(DEB)

# The .deb installed by apt (Recommends on) into a debootstrap --variant=minbase root of each
# release in DISTROS, then checked there: Depends/Recommends bring every library the binaries
# name, --version, the dynamic link, collect, identifier, match, journey against a loopback test
# AM, keys list, a TPM identity on a loopback swtpm, collect under umockdev, release-golden.sh.
# Needs root and the Debian mirror. The roots are cached in $(STATIC)/distros (~300 MB each):
# the first run costs 30-100 s per release (debootstrap, mostly download), later runs 5-7 s.
DISTROS ?= bookworm trixie
check-distros: deps-distros deb
	packaging/check-distros.sh $(DEB) $(STATIC)/distros $(DISTROS)

# FASTFETCH=/path/to/fastfetch adds fastfetch to the collect benchmark (Debian 12 has no package).
bench: deps-bench release
	bench/release-golden.sh $(BIN)
	python3 bench/collect_bench.py --binary $(BIN) --peers $(if $(FASTFETCH),--fastfetch $(FASTFETCH))
	bench/udev-bench.sh $(BIN)
	FR_PROFILE=$(BIN) bench/match-bench.sh

clean:
	rm -rf .build $(STATIC) dist

# fr-profile — the two commands of the README, plus install and bench.
#   make run    install missing system packages, build the release binaries, run `fr-profile collect`
#   make test   install what the tests need, run the whole test suite
SHELL := /bin/bash
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
PREFIX ?= /usr/local
STATIC := .build-static
BIN := $(STATIC)/release/fr-profile
ARGS ?=

# Debian packages each goal needs (installed only when missing).
PKGS_BUILD := libudev-dev pkg-config libcurl4-openssl-dev
PKGS_TEST := $(PKGS_BUILD) umockdev util-linux libssl-dev openssl
PKGS_BENCH := $(PKGS_BUILD) gcc binutils valgrind lshw hwinfo inxi neofetch python3 time umockdev

# The fastest start-up measured on this machine (README "Benchmark"): static Swift stdlib,
# no PIE, static libgcc and libstdc++ (via a linker script on the -L path); libc, libm and
# libudev stay dynamic; no $ORIGIN rpath (no library ships beside the binary; with it, ld.so
# probed four directories for libudev first). --no-export-dynamic: nothing loads symbols from the executable, and
# the Swift runtime's start-up dladdr() otherwise scans ~100k exported symbols. The section
# ordering file (bench/collect-order.sh) makes gold put the functions collect runs next to each
# other, which lowers its peak RSS (README "Benchmark"); it moves code, never changes it, and
# bench/release-golden.sh (run by `make bench`) checks the release binary's golden profiles.
RELEASE_FLAGS := -c release --product fr-profile --scratch-path $(STATIC) --static-swift-stdlib --disable-local-rpath \
  -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -Xclang-linker -Xswiftc -static-libgcc \
  -Xlinker -L$(CURDIR)/$(STATIC)/stdcxx -Xlinker --no-export-dynamic \
  -Xlinker --section-ordering-file=$(CURDIR)/bench/collect-order.txt

.PHONY: run test build release install bench deps-build deps-test deps-bench clean

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

run: release
	$(BIN) collect $(ARGS)

release: deps-build
	@mkdir -p $(STATIC)/stdcxx
	@echo "INPUT($$(gcc -print-file-name=libstdc++.a))" > $(STATIC)/stdcxx/libstdc++.so
	$(SWIFT) build $(RELEASE_FLAGS)
	$(SWIFT) build $(subst --product fr-profile,--product fr-profile-journey,$(RELEASE_FLAGS))

build: deps-build
	$(SWIFT) build

test: deps-test
	$(SWIFT) build --build-tests
	$(SWIFT) test

install: release
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/fr-profile
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/fr-profile
	install -m 0755 $(STATIC)/release/fr-profile-journey $(DESTDIR)$(PREFIX)/bin/fr-profile-journey
	install -m 0644 match-config.json $(DESTDIR)$(PREFIX)/share/fr-profile/match-config.json

# FASTFETCH=/path/to/fastfetch adds fastfetch to the collect benchmark (Debian 12 has no package).
bench: deps-bench release
	bench/release-golden.sh $(BIN)
	python3 bench/collect_bench.py --binary $(BIN) --peers $(if $(FASTFETCH),--fastfetch $(FASTFETCH))
	bench/udev-bench.sh $(BIN)
	FR_PROFILE=$(BIN) bench/match-bench.sh

clean:
	rm -rf .build $(STATIC)

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
PKGS_BENCH := $(PKGS_BUILD) gcc lshw hwinfo inxi neofetch python3 time umockdev

# The fastest start-up measured on this machine (README "Benchmark"): static Swift stdlib,
# no PIE, static libgcc and libstdc++ (via a linker script on the -L path); libc, libm and
# libudev stay dynamic.
RELEASE_FLAGS := -c release --product fr-profile --scratch-path $(STATIC) --static-swift-stdlib \
  -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -Xclang-linker -Xswiftc -static-libgcc \
  -Xlinker -L$(CURDIR)/$(STATIC)/stdcxx

.PHONY: run test build release install bench deps-build deps-test deps-bench clean fuzz fuzz-build fuzz-replay-corpus

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
	$(MAKE) fuzz-replay-corpus
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_TEST_SECONDS)

# Every seed and every past crash through each target, without sanitizers (the debug build).
fuzz-replay-corpus:
	@bin=$$($(SWIFT) build --show-bin-path); for t in $(FUZZ_TARGETS); do "$$bin/$$t" Fuzz/Corpus/$$t || exit 1; done

fuzz-build: deps-build
	@for t in $(FUZZ_TARGETS); do $(SWIFT) build $(FUZZ_FLAGS) --product $$t || exit 1; done

fuzz: fuzz-build
	Fuzz/run.sh $(FUZZ_SECONDS) "$$($(SWIFT) build $(FUZZ_FLAGS) --show-bin-path)" $(FUZZ_TARGETS)

install: release
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/fr-profile
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/fr-profile
	install -m 0755 $(STATIC)/release/fr-profile-journey $(DESTDIR)$(PREFIX)/bin/fr-profile-journey
	install -m 0644 match-config.json $(DESTDIR)$(PREFIX)/share/fr-profile/match-config.json

bench: deps-bench release
	python3 bench/collect_bench.py --binary $(BIN)
	bench/udev-bench.sh $(BIN)
	FR_PROFILE=$(BIN) bench/match-bench.sh

clean:
	rm -rf .build $(STATIC)

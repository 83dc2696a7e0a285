# Shutter: `make run` starts the service on the simulated board, `make test` runs every test.
SWIFT ?= swift

.PHONY: all deps test-deps version build test run bench clean

all: build

deps:
	@sh deploy/install-deps.sh

# deps, and what only the tests use (a headless browser for the web page's test).
test-deps:
	@sh deploy/install-deps.sh --test

# The version (deploy/version.sh: a v* tag, git describe, else VERSION) into a git-ignored
# Swift file, before every build; rewritten only when it changed (docs/deploy.md: Versions).
version:
	@sh deploy/version-stamp.sh >/dev/null

build: deps version
	$(SWIFT) build

# Each stage timed by deploy/test-stages.sh, which prints a table of their seconds and the
# total at the end (also when a stage fails: what ran, then the failure's status); the hil
# stage's rows (kernel, bookworm, trixie) come from the lines deploy/hil/run.sh prints.
test:
	@sh deploy/test-stages.sh \
		"deps/compat" "$(MAKE) --no-print-directory test-deps version compat" \
		"build-tests" "$(SWIFT) build --build-tests" \
		"check-scripts" "$(MAKE) --no-print-directory check-scripts" \
		"swift test" "$(SWIFT) test --skip-build --disable-swift-testing" \
		"units" "$(MAKE) --no-print-directory units-test" \
		"hil" "$(MAKE) --no-print-directory hil"

release: deps version
	$(SWIFT) build -c release

run: release
	@mkdir -p shutter-data
	.build/release/shutterd --board sim --storage ./shutter-data

# Benchmarks (release build), JSON lines with their references measured in the same run.
# BENCH_REALTIME_SECONDS shortens the 10-minute real-time recording run.
BENCH_REALTIME_SECONDS ?= 600
# The RTSP viewers' churn (resident memory after an hour of viewers, taps and holds).
BENCH_CHURN_SECONDS ?= 3600
bench: deps version
	$(SWIFT) build -c release --product bench-still
	$(SWIFT) build -c release --product bench-recording
	.build/release/bench-still
	.build/release/bench-recording --realtime-seconds $(BENCH_REALTIME_SECONDS) --preroll-seconds $(BENCH_REALTIME_SECONDS)
	$(SWIFT) build -c release --product shutterd
	$(SWIFT) build -c release --product shutterctl
	sh deploy/bench/overload.sh .build/release 8 15
	$(SWIFT) build --build-tests
	SHUTTER_BENCH=1 $(SWIFT) test --skip-build --filter ServiceFiguresTests
	SHUTTER_BENCH=1 $(SWIFT) test --skip-build --disable-swift-testing --filter MQTTFiguresTests
	SHUTTER_BENCH=1 BENCH_REALTIME_SECONDS=$(BENCH_REALTIME_SECONDS) $(SWIFT) test --skip-build --disable-swift-testing \
		--filter WebEndToEndTests.testPreviewNeverSlowsTheRecorder
	SHUTTER_BENCH=1 $(SWIFT) test --skip-build --disable-swift-testing --filter LiveFiguresTests
	SHUTTER_BENCH=1 $(SWIFT) test --skip-build --disable-swift-testing --filter UploadTests.testUploadFigures
	SHUTTER_BENCH=1 BENCH_CHURN_SECONDS=$(BENCH_CHURN_SECONDS) $(SWIFT) test --skip-build --disable-swift-testing \
		--filter LiveEdgeTests.testViewerChurnMemory

clean:
	rm -rf .build

# W^X: no built executable may have a writable and executable segment (issue 14); the
# check itself must fail on bad binaries; the archive URI comes from apt's sources; the
# version's forms sort as dpkg compares them; every relative link and anchor in README.md,
# CHANGELOG.md and docs/*.md resolves, and that checker fails on broken ones; the man pages
# (docs/man/*.scd) name every option and command of the debug programs' --help and every
# configuration key, and that checker fails on incomplete pages; the package's copyright
# checker (deploy/deb/check-copyright.py) fails on a file that misses what a static Swift
# program or the debug shutterd carries; shutterd and shutterctl link FoundationEssentials, not Foundation;
# make test's stage table (deploy/test-stages.sh) with fake stages. ~15 s. Run after a build (`make test` does).
.PHONY: check-scripts
check-scripts:
	@sh deploy/check-segments.sh .build/debug
	@sh deploy/test-check-segments.sh
	@sh deploy/test-apt-archive-uri.sh
	@sh deploy/test-version.sh
	@python3 deploy/check-doc-links.py
	@sh deploy/test-check-doc-links.sh
	@python3 deploy/check-man-pages.py --bin .build/debug
	@sh deploy/test-check-man-pages.sh
	@sh deploy/deb/test-check-copyright.sh .build/debug
	@sh deploy/test-test-stages.sh
	@for exe in shutterd shutterctl; do \
		if ldd .build/debug/$$exe | grep -qE 'lib(Foundation|FoundationInternationalization|_FoundationICU)\.so'; then \
			echo "check-scripts: FAIL $$exe links full Foundation (and so ICU, 34 MiB static): its modules import FoundationEssentials (docs/deploy.md)"; exit 1; fi; \
	done

# Debian package for this machine: .build/shutter_<version>_<arch>.deb, Swift runtime
# linked statically; lintian (errors fail); the copyright file against what the programs
# carry (deploy/deb/check-copyright.py); size and start time against the dynamic build
# (docs/deploy.md: Build the package). `make deb-test` installs, upgrades, removes and
# purges it in a clean bookworm root (root only; cached root).
.PHONY: deb deb-test arm64-deb
deb: deps version
	@sh deploy/deb/install-deps.sh
	$(SWIFT) build -c release --product shutterd
	$(SWIFT) build -c release --product shutterctl
	@sh deploy/deb/build.sh > .build/deb-path
	@sh deploy/deb/lint.sh "$$(cat .build/deb-path)"
	@python3 deploy/deb/check-copyright.py "$$(cat .build/deb-path)"
	@sh deploy/deb/figures.sh "$$(cat .build/deb-path)" .build/release

deb-test: deb
	@sh deploy/deb/test-install.sh "$$(cat .build/deb-path)"

# The package's units under a real systemd: a clean bookworm root with the package, booted by
# systemd-nspawn (systemd as PID 1, a private network); the live RTSP stream through
# shutterd-rtsp.socket to a viewer, shutterd's sandbox score, the fix said without the socket
# (deploy/deb/test-units.sh; docs/home-automation.md, Live video).
.PHONY: units-test
units-test: deb
	@sh deploy/deb/test-units.sh "$$(cat .build/deb-path)"

# Shutter against a real Home Assistant (issue 41), not in `make test`: Home Assistant 2024.3.3
# from PyPI in a venv cached in /var/cache/shutter-ha, Mosquitto, the debug shutterd on the sim
# board; the MQTT integration added through its config flow, the discovered device and its
# entities each acting on the camera, the docs' recipe, a reload of the MQTT entry, restarts; any
# warning about Shutter fails it (deploy/ha/test-ha.sh; docs/home-automation.md). 30–50 s with
# the venv cached; its first install 1.5–12 min more.
.PHONY: ha-test
ha-test: deps version
	@sh deploy/ha/install-deps.sh
	$(SWIFT) build --product shutterd
	@sh deploy/ha/test-ha.sh .build/debug/shutterd

# Reproducible package: build.sh twice in a row, byte-identical .deb files (deploy/deb/test-repro.sh;
# docs/deploy.md: Build the package). 132 s measured warm (two xz runs); a cold tree builds the static programs first.
.PHONY: deb-repro
deb-repro: deps version
	@sh deploy/deb/install-deps.sh
	@sh deploy/deb/test-repro.sh

# The arm64 package (for Raspberry Pi OS trixie: libcamera 0.7 from trixie-backports) in
# make arm64's cached trixie root, lintian, and the same install test in a clean trixie
# arm64 root under qemu-user. Before a release, like make arm64 (cold: over an hour).
arm64-deb: version
	@sh deploy/deb/install-deps.sh
	@ARM64_STEPS=deb sh deploy/arm64/run.sh
	@sh deploy/deb/lint.sh "$$(cat .build/deb-path-arm64)"
	@python3 deploy/deb/check-copyright.py "$$(cat .build/deb-path-arm64)"
	@sh deploy/deb/test-install.sh "$$(cat .build/deb-path-arm64)" trixie arm64 backports

# The package on arm64 (the Pi's architecture) in a cached Debian trixie arm64 root under
# qemu-user: release shutterd and shutterctl, the Core and Media unit tests, segment check
# (docs/emulated-hardware.md: On arm64). Not in `make test`: cold it takes ~70 min; run it before a release.
.PHONY: arm64
arm64: version
	@sh deploy/arm64/run.sh

# The C/C++ shims against Debian trixie's headers (libgpiod 2.x, libcamera 0.4,
# FFmpeg 7), and the libcamera shim against trixie-backports' libcamera 0.7,
# fetched with apt-get download into .build/compat (cached).
.PHONY: compat
compat:
	@sh deploy/compat/check-trixie.sh

# Emulated hardware: the release shutterd in a QEMU VM on vimc + gpio-sim + snd-aloop
# (docs/emulated-hardware.md), booted twice: bookworm's libcamera 0.0.3, then a cached
# trixie root's libcamera 0.7.1 with its virtual cameras (shutterd built there with Swift
# 6.0.3; needs root or password-less sudo). Cold caches: kernel ~7 min, trixie root ~4 min;
# scenarios: ~4 min on bookworm, ~11 min on trixie. HIL_ROOTS=bookworm boots one.
.PHONY: hil hil-probe hil-arm64
hil: deps version
	@sh deploy/hil/run.sh

# The same on arm64 (the Pi's architecture) on real kernel drivers: the VM kernel cross-built
# for arm64, qemu-system-aarch64 -M virt -cpu cortex-a72 (TCG), make arm64's trixie arm64 root
# with a layer of the VM's tools, the arm64 release shutterd built there under qemu-user; the
# probe, tap, hold, power-cut and bounce scenarios (docs/emulated-hardware.md: make hil-arm64). Not in `make test`:
# cold ~55 min with make arm64's root cached (the release build under qemu-user ~35 of it;
# ~1.5 h without), ~4 min after a commit (a relink and the scenarios).
hil-arm64: version
	@HIL_ROOTS=arm64 sh deploy/hil/run.sh probe tap hold power-cut bounce

# The VM's devices alone (gpio-sim, vimc through libcamera, loopback tone), no shutterd.
hil-probe:
	@HIL_NO_SHUTTERD=1 sh deploy/hil/run.sh probe

# Shutter side by side with rpicam-apps (issue 24): Raspberry Pi's libcamera fork and
# rpicam-apps built from pinned snapshots in overlay layers on make hil's libcamera 0.7.1
# root (cached under /var/cache/shutter-peer), then one VM boot running both on the same
# virtual camera, printed as one table (docs/performance.md). Fails when row 5 (the release
# shutterd on the fork's library: two streams, camera next) fails. Not in `make test`:
# warm ~14 min here (the VM boot ~13 of it), cold adds ~15 min of layers. PEER_N=5 shortens row 1.
.PHONY: peer
peer: version
	@sh deploy/peer/run.sh

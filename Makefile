# privada: build, install, test, lint, bench.  No experiment logic here:
# experiments live in pipelines/.
#
#   make deps    install the Debian packages the build and tests need
#   make deps-slurm  the Slurm and munge packages of tests/slurm.bats
#   make         build lib/libprivada.a and the tools into build/bin
#   make test    C unit tests + bats tests, ending "N passed, N failed"
#   make run     the main job (see README.md)

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.SUFFIXES:

PREFIX ?= /usr/local
CC ?= cc
TOOLS := featurize tns rdp-account psdshrink coral-align covest dpsgd-train predict teacher-vote gmm-fit kde-publish mia-eval
# The library's rooms (README.md, "Where things are"): lib/ never prints,
# exits or reads the environment; tools/common is the tools' own archive.
ROOMS := common format dp num ml mech
LIB_SRC := $(foreach r,$(ROOMS),$(wildcard lib/$(r)/*.c))
LIB_HDR := $(foreach r,$(ROOMS),$(wildcard lib/$(r)/*.h))
CLI_SRC := $(wildcard tools/common/*.c)
CLI_HDR := $(wildcard tools/common/*.h)
UNIT_SRC := $(wildcard tests/unit/test_*.c)

WARN := -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror
CFLAGS ?= -O2 -g
CPPFLAGS += -D_GNU_SOURCE $(addprefix -Ilib/,$(ROOMS)) -Itools/common \
	-I/usr/include/postgresql
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(XCFLAGS)
LDLIBS := -lsqlite3 -lpq -lcsv -lzstd -llapacke -lopenblas -lgmp -lfftw3f -lfftw3 -lz -lm -lpthread

B := build
BIN := $(B)/bin

# Debian 12 packages: build, test, lint and data sources.
DEB_PKGS := build-essential libcsv-dev libzstd-dev zstd zlib1g-dev \
	libopenblas-dev liblapacke-dev libgmp-dev bats bats-assert bats-support \
	mandoc clang python3-numpy python3-zstandard python3-setuptools \
	python3-venv dataset-fashion-mnist python3-sklearn \
	python3-scipy gnuplot-nox libfftw3-dev libsqlite3-dev sqlite3 \
	libpq-dev postgresql python3-cryptography

PHONY_EXTRA := tests-bin
.PHONY: $(PHONY_EXTRA) all deps deps-slurm bench-deps test unit bats asan fuzz fuzz-run bench install run lint clean help identity

all: $(BIN)/$(firstword $(TOOLS)) $(addprefix $(BIN)/,$(TOOLS)) $(B)/completions/privada.bash ## build library, tools, completion

# Bash completion, generated from each tool's --help (privada(7), Shell completion).
$(B)/completions/privada.bash: completions/gen $(addprefix $(BIN)/,$(TOOLS))
	@mkdir -p $(@D)
	completions/gen $(BIN) $(TOOLS) > $@

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'

# apt_install PKGS: install those of PKGS not installed (apt-get; sudo when not root).
define apt_install
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq; \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi
endef

deps: ## install missing Debian packages (apt-get; sudo when not root)
	$(call apt_install,$(DEB_PKGS))

# The pipelines on Slurm (pipelines/README.md, "Running at scale"):
# tests/slurm.bats starts a private single-node cluster from these
# (tests/slurm/cluster); make test installs them (deps-slurm).
SLURM_DEB_PKGS := slurmctld slurmd slurm-client munge

deps-slurm: ## install missing Slurm and munge packages (tests/slurm.bats)
	$(call apt_install,$(SLURM_DEB_PKGS))

# make bench only: the peers timed beside the tools (tests/bench/cnn.sh and dpsgd.sh run
# Opacus on Debian's torch).  make test never needs them.
BENCH_DEB_PKGS := python3-torch

bench-deps: ## install the Debian packages make bench's peers need (torch)
	$(call apt_install,$(BENCH_DEB_PKGS))

$(B)/obj/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(B)/obj/cli/%.o: tools/common/%.c $(LIB_HDR) $(CLI_HDR)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# sqrt without errno vectorises: the moduli of the scattering transform.
$(B)/obj/num/scatter.o: XCFLAGS += -fno-math-errno

$(B)/libprivada.a: $(patsubst lib/%.c,$(B)/obj/%.o,$(LIB_SRC))
	rm -f $@
	ar rcs $@ $^

$(B)/libprivada-cli.a: $(patsubst tools/common/%.c,$(B)/obj/cli/%.o,$(CLI_SRC))
	rm -f $@
	ar rcs $@ $^

LIBS := $(B)/libprivada-cli.a $(B)/libprivada.a
$(BIN)/%: tools/%.c $(LIBS) $(LIB_HDR) $(CLI_HDR) | $(BIN)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $(filter %.c,$^) $(LIBS) $(LDLIBS)

# A tool in several files: tools/NAME.c (options, main) and tools/NAME/.
$(BIN)/gmm-fit: $(wildcard tools/gmm-fit/*.[ch])
$(BIN)/dpsgd-train: $(wildcard tools/dpsgd-train/*.[ch])
$(BIN)/featurize: $(wildcard tools/featurize/*.[ch])

# tns has one file per group of commands, under tools/tns/.
TNS_SRC := $(wildcard tools/tns/*.c)
$(BIN)/tns: $(TNS_SRC) tools/tns/tns.h $(LIBS) $(LIB_HDR) $(CLI_HDR) | $(BIN)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $(TNS_SRC) $(LIBS) $(LDLIBS)

$(B)/unit/%: tests/unit/%.c $(B)/libprivada.a $(LIB_HDR) | $(B)/unit
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Wno-conversion -o $@ $< $(B)/libprivada.a $(LDLIBS)

$(BIN) $(B)/unit:
	mkdir -p $@

UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/unit/%,$(UNIT_SRC))
HELPERS := $(patsubst tests/helpers/%.c,$(B)/tests-bin/%,$(wildcard tests/helpers/*.c))

$(B)/tests-bin/%: tests/helpers/%.c $(LIBS) $(LIB_HDR) $(CLI_HDR)
	mkdir -p $(B)/tests-bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIBS) $(LDLIBS)

tests-bin: $(HELPERS) ## build the test-only helper programs

FUZZ_SECONDS ?= 60
test: deps deps-slurm all $(UNIT_BINS) $(HELPERS) ## unit + bats tests + a bounded fuzz run; last line "N passed, N failed"
	@FUZZ_SECONDS=$(FUZZ_SECONDS) PRIVADA_BIN=$(BIN) tests/run $(UNIT_BINS)

# Leak checking is off: tools exit(3) on errors with their buffers still
# allocated, which LeakSanitizer would report as leaks.
asan: ## build with ASan+UBSan into build-asan/ and run the tests there
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(MAKE) B=build-asan CC=clang FUZZ_SECONDS=0 CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" test

fuzz: $(B)/fuzz/fuzz_reader ## build the libFuzzer target for the reader

$(B)/fuzz/fuzz_reader: tests/fuzz/fuzz_reader.c $(LIB_SRC) $(LIB_HDR)
	mkdir -p $(B)/fuzz
	clang $(CPPFLAGS) -std=c11 -O1 -g -fsanitize=fuzzer,address,undefined \
		-o $@ $< $(LIB_SRC) $(LDLIBS)

fuzz-run: $(B)/fuzz/fuzz_reader ## run the reader fuzzer for FUZZ_SECONDS on the vectors
	mkdir -p $(B)/fuzz/corpus
	cp formats/testdata/good/*.tns formats/testdata/bad/*.tns $(B)/fuzz/corpus/
	$(B)/fuzz/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
		-print_final_stats=1 $(B)/fuzz/corpus 2>&1 | tail -n 12

# Seeded outputs of every tool equal those of git REF (default: the
# merge-base with main); not part of make test.  See tests/identity/check.
REF ?=
identity: all ## seeded outputs equal those of git REF (default: merge-base with main)
	tests/identity/check $(REF)

bench: all bench-deps $(HELPERS) $(B)/bench/mkbig ## benchmarks (ratios against baselines run alongside)
	@tests/bench/run

$(B)/bench/%: tests/bench/%.c $(LIBS) $(LIB_HDR) $(CLI_HDR)
	mkdir -p $(B)/bench
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIBS) $(LDLIBS)

BASHCOMP := $(PREFIX)/share/bash-completion/completions
install: all ## install tools, man pages and bash completion under PREFIX
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7 \
		$(DESTDIR)$(BASHCOMP)
	install -m 644 $(B)/completions/privada.bash $(DESTDIR)$(BASHCOMP)/privada
	for t in $(TOOLS); do ln -sf privada $(DESTDIR)$(BASHCOMP)/$$t; done
	install -m 755 $(addprefix $(BIN)/,$(TOOLS)) $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(addsuffix .1,$(addprefix man/,$(TOOLS))) $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 man/tensor-stream.5 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 644 man/privada.7 $(DESTDIR)$(PREFIX)/share/man/man7

# PRIMA on one Office-Caltech10 task at epsilon 2 (about a minute on 2
# cores); every experiment: make -C pipelines -j2 all.
RUN_TASK ?= surf/caltech:amazon
run: deps all ## the main job: PRIMA on one Office-Caltech10 task at epsilon 2
	$(MAKE) -C pipelines/prima OUT=out/run TASKS=$(RUN_TASK) EPS=2 SEEDS=1

lint: ## mandoc -Tlint on every man page
	mandoc -Tlint -W warning man/*.[157]

clean: ## remove build output and leftover temporary files (privada(7))
	rm -rf build build-asan
	find . -path ./.git -prune -o -name '.*.privada-tmp.*' -type f \
	    -exec rm -f -- {} +

# asyncscope build. `make` builds build/asyncscope; `make test` builds the
# sanitizer variant and the unit tests and runs every test; `make demo`
# installs what is missing, builds, and traces the bundled demo Tokio program.
CC        ?= gcc
CLANG     ?= clang
BPFTOOL   ?= bpftool
CARGO     ?= $(shell command -v cargo 2>/dev/null || echo $(HOME)/.cargo/bin/cargo)
OUT       := build
ARCH      := x86

WARN      := -Wall -Wextra -Werror -Wno-missing-field-initializers
CFLAGS    ?= -O2 -g
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Isrc -Ibpf -I$(OUT)
SANFLAGS  := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LIBS      := -lbpf -lelf -ldw -lz -l:libiberty.a -lncurses -lcapstone -lpthread -lmicrohttpd

# threads.bpf.c (the thread iterator dump loads alone) is a skeleton of its own.
BPF_SRCS  := $(filter-out bpf/threads.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
SRCS      := $(wildcard src/*/*.c)
# Modules without libbpf or root: what unit tests link against.
PURE_SRCS := $(wildcard src/util/*.c src/trace/*.c src/pipeline/*.c src/cat/*.c src/analysis/*.c src/output/*.c src/sym/*.c src/serve/*.c) \
             src/probe/plan.c src/probe/profile.c src/probe/futures_plan.c src/probe/runtime_id.c src/probe/site.c \
             src/probe/callees.c src/probe/future_names.c \
             src/dump/task_lists.c src/dump/await_profile.c src/dump/rt_context.c src/dump/async_task.c src/dump/frame_loc.c \
             src/record/decode.c src/record/fixup.c src/record/stats.c src/record/flight.c \
             src/record/idle_refs.c
OBJS      := $(patsubst src/%.c,$(OUT)/obj/%.o,$(SRCS))
SAN_OBJS  := $(patsubst src/%.c,$(OUT)/san/%.o,$(SRCS))
SAN_PURE_OBJS := $(patsubst src/%.c,$(OUT)/san/%.o,$(PURE_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))
# Header dependencies come from the compiler (-MMD); see the include at the end.
DEPFLAGS  := -MMD -MP
# Only src/probe and src/record include the BPF skeleton.
SKEL_USERS := $(patsubst src/%.c,$(OUT)/obj/%.o,$(wildcard src/probe/*.c src/record/*.c)) \
              $(patsubst src/%.c,$(OUT)/san/%.o,$(wildcard src/probe/*.c src/record/*.c))

.DEFAULT_GOAL := all

$(SKEL_USERS): $(OUT)/asyncscope.skel.h $(OUT)/threads.skel.h $(OUT)/threads.lskel.h

.PHONY: all test unit integ demo setup apps clean bench test-profiles
all: $(OUT)/asyncscope

$(OUT)/vmlinux.h:
	@mkdir -p $(OUT)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(OUT)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUT) -Ibpf -c $< -o $@

$(OUT)/asyncscope.bpf.o: $(BPF_OBJS)
	$(BPFTOOL) gen object $@ $^

$(OUT)/asyncscope.skel.h: $(OUT)/asyncscope.bpf.o
	$(BPFTOOL) gen skeleton $< name asyncscope_bpf > $@.tmp && mv $@.tmp $@

$(OUT)/threads.skel.h: $(OUT)/bpf/threads.bpf.o
	$(BPFTOOL) gen object $(OUT)/threads.bpf.o $< && \
	$(BPFTOOL) gen skeleton $(OUT)/threads.bpf.o name threads_bpf > $@.tmp && mv $@.tmp $@

# the same object as a light skeleton (loaded by a BPF loader program, CO-RE
# done by the kernel: libbpf does not read the kernel's BTF, most of a load)
$(OUT)/threads.lskel.h: $(OUT)/threads.skel.h
	$(BPFTOOL) gen skeleton -L $(OUT)/threads.bpf.o name threads_lbpf > $@.tmp && mv $@.tmp $@

$(OUT)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OUT)/san/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) $(WARN) $(DEPFLAGS) -std=gnu11 -D_GNU_SOURCE -Isrc -Ibpf -I$(OUT) -c $< -o $@

$(OUT)/asyncscope: $(OBJS)
	$(CC) $(ALL_CFLAGS) $^ $(LIBS) -o $@

$(OUT)/asyncscope-san: $(SAN_OBJS)
	$(CC) $(SANFLAGS) $^ $(LIBS) -o $@

$(OUT)/tests/%: tests/unit/%.c $(SAN_PURE_OBJS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Isrc -Ibpf -I$(OUT) -Itests/unit $< $(SAN_PURE_OBJS) $(LIBS) -o $@

apps:
	scripts/build-apps.sh

unit: $(UNIT_BINS)

# Everything: unit tests (no root), then integration tests (real BPF, real Tokio programs).
test: setup-check $(OUT)/asyncscope $(OUT)/asyncscope-san $(UNIT_BINS) apps
	scripts/run-tests.sh $(UNIT_BINS)

# The build-profile matrix in full: tests/apps-deployed's program in every profile on
# tokio 1.24 and 1.53 (make test runs every profile on 1.53, and the default and
# stripped builds on 1.24).
test-profiles: $(OUT)/asyncscope-san apps
	tests/integ/run.sh tests/integ/profiles/*.case 'deployed_*' 'tokio153_deployed_*'

setup:
	scripts/setup.sh

setup-check:
	@scripts/setup.sh --check

demo: setup
	$(MAKE) all apps
	scripts/demo.sh

bench: all apps
	bench/overhead.sh

# every mode against untraced and bpftrace, interleaved (bench/modes.py; ~8 min)
bench-modes: all apps
	python3 bench/modes.py

# ---- Fuzzing (tests/fuzz, README "Fuzzing") -------------------------------
# `make fuzz` builds libFuzzer harnesses of the trace reader and the CAT
# reader, each driving the analyses and every output, and of the HTML
# page's reader of the report JSON (html_bound) (clang, runtime in
# libclang-rt-14-dev); `make fuzz-run` runs each for FUZZ_RUNS inputs (at
# most FUZZ_TIME_CAP s), as `make test` does; `make fuzz-long` runs each for
# FUZZ_SECONDS on a corpus kept in build/fuzz/corpus/. Crashes go to
# build/fuzz/crashes/. Only the modules that read traces are linked: no
# libbpf, no libdw.
FUZZ_CC       ?= clang
FUZZ_RUNS     ?= 10000
FUZZ_TIME_CAP ?= 45
FUZZ_SECONDS  ?= 3600
FUZZ_FLAGS    := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
                 -fno-sanitize-recover=all $(WARN) -std=gnu11 -D_GNU_SOURCE -Isrc -I$(OUT)
FUZZ_SRCS     := $(filter-out src/output/tui.c src/trace/writer.c src/util/units.c,$(wildcard \
                 src/util/*.c src/trace/*.c src/pipeline/*.c src/cat/*.c src/analysis/*.c \
                 src/output/*.c)) src/sym/demangle.c src/probe/profile.c
FUZZ_OBJS     := $(patsubst src/%.c,$(OUT)/fuzz/obj/%.o,$(FUZZ_SRCS)) \
                 $(OUT)/fuzz/obj/fuzz_drive.o $(OUT)/fuzz/obj/json_check.o
FUZZ_LIBS     := -lz -l:libiberty.a
FUZZ_BINS     := $(OUT)/fuzz/fuzz_trace $(OUT)/fuzz/fuzz_cat $(OUT)/fuzz/fuzz_html

.PHONY: fuzz fuzz-run fuzz-long bench-modes
fuzz: $(FUZZ_BINS)

$(OUT)/fuzz/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(DEPFLAGS) -c $< -o $@

# the harness's own checks (JSON scans of whole outputs) are no coverage
# worth steering by: sanitizers only, no fuzzer instrumentation
$(OUT)/fuzz/obj/%.o: tests/fuzz/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(DEPFLAGS) -Itests/fuzz -c $< -o $@

$(FUZZ_BINS): $(OUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_drive.h $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -Itests/fuzz $< $(FUZZ_OBJS) $(FUZZ_LIBS) -o $@

fuzz-run: $(FUZZ_BINS)
	FUZZ_TIME_CAP=$(FUZZ_TIME_CAP) tests/fuzz/run.sh --runs $(FUZZ_RUNS)

fuzz-long: $(FUZZ_BINS)
	tests/fuzz/run.sh --seconds $(FUZZ_SECONDS)

# `make test` runs them too (scripts/run-tests.sh, FUZZ_RUNS inputs each).
test: $(FUZZ_BINS)
export FUZZ_RUNS FUZZ_TIME_CAP

-include $(FUZZ_OBJS:.o=.d)
# ---- end of fuzzing --------------------------------------------------------

clean:
	rm -rf $(OUT)

-include $(OBJS:.o=.d) $(SAN_OBJS:.o=.d)

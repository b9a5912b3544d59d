# pure-link build.  Everything goes under build/.  See README.md for the two commands.
#   make            library (static + shared), tools
#   make test       every test, last line "N passed, N failed, N skipped"   (T=pattern runs a subset)
#   make demo       a record transfer over a lossy simulated path
#   make bench      benchmarks that print figures (never timed assertions)
#   make bench-peers  pure-link send/recv beside quinn and ngtcp2 (scripts/bench_peers.sh)
#   make bench-relay  the same through pure-link-sim relay at 50 Mbit/s, RTT 20 ms: CPU-seconds
#                     of sender + receiver per GB delivered, pure-link's over ngtcp2's and quinn's
#   make mutants    the mutation gate: each mutation of tests/mutants/list must fail a test
#   make install    PREFIX=/usr/local DESTDIR=  (libraries, headers, .pc, the tool, its manual
#                   and the receiver's systemd unit)

VERSION      := 0.1.0
SOVERSION    := 1
PREFIX       ?= /usr/local
DESTDIR      ?=
CC           ?= cc
B            := build

WARN     := -Wall -Wextra -Wshadow -Wvla -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CFLAGS   ?= -O2 -g
CORE_CFLAGS := -std=c11 $(WARN) -Werror -fPIC -fvisibility=hidden $(CFLAGS) -Icore
# The shims live in a folder per concept: socket backends (io/), the loop that drives an
# endpoint over them (driver/), the receiver's durable store (store/) and the tool (tool/).
SHIM_DIRS   := shims/io shims/driver shims/store shims/tool
SHIM_INC    := $(addprefix -I,$(SHIM_DIRS))
TOOL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -Icore -Isim -Itests $(SHIM_INC)
LIBS     := -lsodium -lmbedcrypto -lm

CORE_SRC := $(wildcard core/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(B)/%.o)
SIM_SRC  := $(filter-out sim/main.c,$(wildcard sim/*.c))
SIM_OBJ  := $(SIM_SRC:%.c=$(B)/%.o)
SHIM_SRC := $(filter-out shims/tool/main.c,$(wildcard $(addsuffix /*.c,$(SHIM_DIRS))))
SHIM_OBJ := $(SHIM_SRC:%.c=$(B)/%.o)
SHIM_A   := $(B)/libpurelinkshim.a
# The installed shims library: the driver, the socket backends and the store (pl_driver.h,
# pl_io.h, pl_store.h, pl_uring.h), without the tool's own pieces (shims/tool/).
SHIMS_LIB_OBJ := $(filter-out $(B)/shims/tool/%.o,$(SHIM_OBJ))
SHIMS_LIB_A   := $(B)/libpurelink-shims.a
SHIMS_LIB_SO  := $(B)/libpurelink-shims.so.$(VERSION)
SHIMS_HEADERS := shims/driver/pl_driver.h shims/io/pl_io.h shims/store/pl_store.h shims/io/pl_uring.h
# The manual: man/*.scd rendered by scdoc(1) at install; the tool's help is generated from
# the same text at build time (tools/scd2help.awk, needs only awk).
MAN_PAGES := $(B)/man/pure-link.1 $(B)/man/pure_link.3
HELP_H    := $(B)/gen/pure-link-help.h
TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(B)/tests/%)
BENCH_SRC := $(wildcard tests/bench/bench_*.c)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(B)/bench/%)
HEADERS  := $(wildcard core/*.h sim/*.h $(addsuffix /*.h,$(SHIM_DIRS)) tests/*.h)

LIB_A    := $(B)/libpurelink.a
LIB_SO   := $(B)/libpurelink.so.$(VERSION)
SIM_A    := $(B)/libpurelinksim.a
SIM_BIN  := $(if $(wildcard sim/main.c),$(B)/pure-link-sim)
TOOL_BIN := $(if $(wildcard shims/tool/main.c),$(B)/pure-link)

.PHONY: all deps test demo bench install clean check-pure vectors fuzz campaign install-wireshark
.PHONY: fuzz-long fuzz-corpus deps-fuzz deps-bench test-asan bench-peers bench-relay mutants
all: deps $(LIB_A) $(LIB_SO) $(SHIMS_LIB_A) $(SHIMS_LIB_SO) $(SIM_BIN) $(TOOL_BIN) $(B)/vectors $(B)/packet_vectors

deps:
	@sh scripts/deps.sh

$(B)/core/%.o: core/%.c $(wildcard core/*.h) | deps
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(CORE_CFLAGS) -c $< -o $@

$(B)/sim/%.o: sim/%.c $(HEADERS) | deps
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(TOOL_CFLAGS) -c $< -o $@
# -fPIC: the same objects make the shared shims library.
$(B)/shims/%.o: shims/%.c $(HEADERS) | deps
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(TOOL_CFLAGS) -fPIC -c $< -o $@

$(LIB_A): $(CORE_OBJ)
	@rm -f $@
	@ar rcs $@ $^

$(LIB_SO): $(CORE_OBJ)
	@echo "  LINK  $@"
	@$(CC) -shared -Wl,-soname,libpurelink.so.$(SOVERSION) -o $@ $^ $(LIBS)
	@ln -sf libpurelink.so.$(VERSION) $(B)/libpurelink.so.$(SOVERSION)
	@ln -sf libpurelink.so.$(SOVERSION) $(B)/libpurelink.so

$(SHIM_A): $(SHIM_OBJ)
	@rm -f $@
	@ar rcs $@ $^

$(SHIMS_LIB_A): $(SHIMS_LIB_OBJ)
	@rm -f $@
	@ar rcs $@ $^

$(SHIMS_LIB_SO): $(SHIMS_LIB_OBJ) $(LIB_SO)
	@echo "  LINK  $@"
	@$(CC) -shared -Wl,-soname,libpurelink-shims.so.$(SOVERSION) -o $@ $(SHIMS_LIB_OBJ) -L$(B) -lpurelink -luring -lpthread
	@ln -sf libpurelink-shims.so.$(VERSION) $(B)/libpurelink-shims.so.$(SOVERSION)
	@ln -sf libpurelink-shims.so.$(SOVERSION) $(B)/libpurelink-shims.so

$(HELP_H): man/pure-link.1.scd tools/scd2help.awk
	@mkdir -p $(dir $@)
	@echo "  GEN   $@"
	@awk -f tools/scd2help.awk man/pure-link.1.scd > $@.tmp && mv $@.tmp $@

$(B)/man/%: man/%.scd
	@sh scripts/deps.sh man
	@mkdir -p $(dir $@)
	@echo "  MAN   $@"
	@scdoc < $< > $@.tmp && mv $@.tmp $@

$(SIM_A): $(SIM_OBJ)
	@rm -f $@
	@ar rcs $@ $^

$(SIM_BIN): sim/main.c $(SIM_A) $(LIB_A) $(HEADERS)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ sim/main.c $(SIM_A) $(LIB_A) $(LIBS)

$(B)/pure-link: shims/tool/main.c $(HELP_H) $(SHIM_A) $(SIM_A) $(LIB_A) $(HEADERS)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -I$(B)/gen -o $@ shims/tool/main.c $(SHIM_A) $(SIM_A) $(LIB_A) $(LIBS) -luring -lpthread

$(B)/tests/%: tests/unit/%.c $(SHIM_A) $(SIM_A) $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $< $(SHIM_A) $(SIM_A) $(LIB_A) $(LIBS) -ldl -lpthread -luring

# The io_uring driver's benchmark links its object and liburing.
$(B)/bench/bench_uring: tests/bench/bench_uring.c $(B)/shims/io/uring.o $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $< $(B)/shims/io/uring.o $(LIB_A) $(LIBS) -luring

# The ordering test watches the calls that make records durable and the claims that follow
# them: each wrapper calls the real function (tests/unit/test_store_order.c).
comma := ,
ORDER_WRAPS := pwrite pwritev fdatasync fsync renameat2 pure_link_stored pl_uring_sync_done io_uring_submit \
               io_uring_submit_and_wait io_uring_submit_and_get_events io_uring_submit_and_wait_timeout
$(B)/tests/test_store_order: tests/unit/test_store_order.c $(SHIM_A) $(SIM_A) $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $< $(addprefix -Wl$(comma)--wrap=,$(ORDER_WRAPS)) $(SHIM_A) $(SIM_A) $(LIB_A) $(LIBS) -ldl -lpthread -luring

# The crash model watches every fdatasync and fsync to keep the disk's durable state beside
# the real files, and the store's claims (tests/unit/test_store_crash.c).
$(B)/tests/test_store_crash: tests/unit/test_store_crash.c $(SHIM_A) $(SIM_A) $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $< $(addprefix -Wl$(comma)--wrap=,fdatasync fsync pure_link_stored pure_link_memo_written) $(SHIM_A) $(SIM_A) $(LIB_A) $(LIBS) -ldl -lpthread -luring

# The store's tests and benchmark link the store (and only it) from shims/store/.
STORE_OBJ := $(filter $(B)/shims/store/%.o,$(SHIM_OBJ))
$(B)/tests/test_store: tests/unit/test_store.c $(STORE_OBJ) $(SIM_A) $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $< $(STORE_OBJ) $(SIM_A) $(LIB_A) $(LIBS) -lpthread
$(B)/bench/bench_store: tests/bench/bench_store.c $(STORE_OBJ) $(SIM_A) $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $< $(STORE_OBJ) $(SIM_A) $(LIB_A) $(LIBS) -lpthread

# Examples of driving the core through its public header alone (shims/examples/README.md);
# tests/sh/test_examples.sh runs them, tests/sh/test_install.sh builds consumer.c.
EXAMPLE_BIN := $(B)/examples/uv_link $(B)/examples/stream_link
$(B)/examples/uv_link: EXAMPLE_LIBS := -luv
$(B)/examples/%: shims/examples/%.c shims/examples/example_host.h core/pure_link.h $(LIB_A)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) -std=gnu11 $(WARN) -Werror $(CFLAGS) -Icore -o $@ $< $(LIB_A) $(LIBS) $(EXAMPLE_LIBS)

$(B)/interop_sender: tests/interop/drive_sender.c $(LIB_A) $(HEADERS)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ tests/interop/drive_sender.c $(LIB_A) $(LIBS)

$(B)/packet_vectors: tools/packet_vectors.c $(LIB_A) $(HEADERS)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ tools/packet_vectors.c $(LIB_A) $(LIBS)

# Regenerates the test vectors of spec/vectors/ (a change to bytes or rules changes them).
vectors: $(B)/vectors $(B)/packet_vectors
	$(B)/vectors spec/vectors/keys.txt
	$(B)/packet_vectors spec/vectors/packets.txt spec/vectors/numbers.txt spec/vectors/refused.txt

$(B)/vectors: tools/vectors.c $(LIB_A) $(HEADERS)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ tools/vectors.c $(LIB_A) $(LIBS)

# The shims' benchmark drives two endpoints through the shim library (both backends).
$(B)/bench/bench_posix: tests/bench/bench_posix.c $(SHIM_A) $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $< $(SHIM_A) $(LIB_A) $(LIBS) -luring -lpthread

# The load generators of scripts/bench_hostile.sh and scripts/bench_many.sh (and their
# tests): not benchmarks themselves, they attack or feed a running `pure-link recv`.
LOAD_BIN := $(B)/bench/load_hostile $(B)/bench/load_many
$(LOAD_BIN): $(B)/bench/load_%: tests/bench/load_%.c tests/bench/load.h $(SHIM_A) $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $< $(SHIM_A) $(LIB_A) $(LIBS) -luring -lpthread

$(B)/bench/%: tests/bench/%.c tests/bench/bench_copy.h $(SIM_A) $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $< $(SIM_A) $(LIB_A) $(LIBS)

# Coverage-guided fuzzing with libFuzzer (clang): tests/fuzz/run.sh runs every target in
# turn from its corpus (tests/fuzz/corpus/<target>/), FUZZ_SECONDS each (make fuzz) or
# FUZZ_RUNS executions each (make fuzz-long).  The *_aead builds run the real AES-128-GCM
# and X25519.  make fuzz-corpus reseeds the corpora from simulator captures, minimised.
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?= 10000000
# make fuzz-long FUZZ_PARALLEL=1 runs the targets at once; FUZZ_LONG_SECONDS=S stops each
# after S seconds even short of FUZZ_RUNS (its line then says so).
FUZZ_PARALLEL     ?= 0
FUZZ_LONG_SECONDS ?=
FUZZ_COMMON := -std=c11 -g -O2 -fno-sanitize-recover=undefined -Icore
FUZZ_FLAGS  := $(FUZZ_COMMON) -fsanitize=fuzzer,address,undefined
# The endpoint targets run the whole core, where tracing every comparison costs a third of
# the speed; their seeds carry the values to match (fuzz_codec keeps it for the parser).
# They leave out UBSan's null and alignment checks on every pointer use (about an eighth of
# their time, measured on a noisy host): a null pointer faults anyway, and make test-asan
# still checks both over the whole suite and every committed corpus input (the replay,
# tests/sh/test_fuzz_corpus.sh).
# Nor do they take coverage from the cipher and the hash (tests/fuzz/coverage_ignore.txt).
FUZZ_PAIR_OPTS  := -fno-sanitize-coverage=trace-cmp -fno-sanitize=null,alignment \
                   -fsanitize-coverage-ignorelist=tests/fuzz/coverage_ignore.txt
FUZZ_PAIR_FLAGS := $(FUZZ_FLAGS) $(FUZZ_PAIR_OPTS)
# The null-cipher pair targets (endpoint, sequence) search without ASan, about 1.6 times
# as fast (35,300 against 22,300 executions a second, run side by side).  The endpoints
# live in one mapping, so ASan saw nothing inside their blocks anyway; what it does see
# (the stack, constant tables, a read past a datagram's end) is checked by running every
# input the search kept through the same target under ASan afterwards ($(B)/fuzz-asan/,
# tests/fuzz/run.sh), and the _aead builds keep ASan in the loop.  UBSan's bounds checks
# and the core's assertions stay in the search.
FUZZ_FAST_FLAGS := $(FUZZ_COMMON) -fsanitize=fuzzer,undefined $(FUZZ_PAIR_OPTS)
FUZZ_NAMES := codec config endpoint endpoint_aead sequence sequence_aead
FUZZ_BIN   := $(FUZZ_NAMES:%=$(B)/fuzz_%) $(B)/fuzz-asan/endpoint $(B)/fuzz-asan/sequence
FUZZ_DEPS  := $(CORE_SRC) $(wildcard core/*.h tests/fuzz/*.h) tests/fuzz/coverage_ignore.txt
$(B)/fuzz_codec: tests/fuzz/fuzz_codec.c $(FUZZ_DEPS)
	@mkdir -p $(B)
	@echo "  FUZZ  $@"
	@clang $(FUZZ_FLAGS) -o $@ $< core/varint.c core/header.c core/codec.c
# The tool's config and key-file readers, instrumented; the rest of the shims they link
# against (sockets, clock) come from the shim library as built.
FUZZ_TOOL_SRC := shims/tool/tool_config.c shims/tool/tool_keys.c shims/tool/tool_util.c
$(B)/fuzz_config: tests/fuzz/fuzz_config.c $(FUZZ_TOOL_SRC) $(FUZZ_DEPS) $(SHIM_A) $(SIM_A) $(HEADERS)
	@mkdir -p $(B)
	@echo "  FUZZ  $@"
	@clang $(FUZZ_FLAGS) -std=gnu11 $(SHIM_INC) -Isim -o $@ $< $(FUZZ_TOOL_SRC) $(CORE_SRC) $(SHIM_A) $(SIM_A) $(LIBS) -luring -lpthread
$(B)/fuzz_%_aead: tests/fuzz/fuzz_%.c $(FUZZ_DEPS)
	@mkdir -p $(B)
	@echo "  FUZZ  $@"
	@clang $(FUZZ_PAIR_FLAGS) -DFUZZ_AEAD_REAL -o $@ $< $(CORE_SRC) $(LIBS)
$(B)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DEPS)
	@mkdir -p $(B)
	@echo "  FUZZ  $@"
	@clang $(FUZZ_FAST_FLAGS) -o $@ $< $(CORE_SRC) $(LIBS)
$(B)/fuzz-asan/%: tests/fuzz/fuzz_%.c $(FUZZ_DEPS)
	@mkdir -p $(dir $@)
	@echo "  FUZZ  $@"
	@clang $(FUZZ_PAIR_FLAGS) -o $@ $< $(CORE_SRC) $(LIBS)
# Each target's entry point without libFuzzer, for make test's corpus replay (tests/fuzz/replay.c).
FUZZ_REPLAY_BIN := $(B)/fuzz-replay/codec $(B)/fuzz-replay/config $(B)/fuzz-replay/endpoint $(B)/fuzz-replay/sequence
# The config target reads through the tool's readers, which live in the shim library.
$(B)/fuzz-replay/config: tests/fuzz/fuzz_config.c tests/fuzz/replay.c $(SHIM_A) $(SIM_A) $(LIB_A) $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $< tests/fuzz/replay.c $(SHIM_A) $(SIM_A) $(LIB_A) $(LIBS) -luring -lpthread
$(B)/fuzz-replay/%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(LIB_A) $(HEADERS) $(wildcard tests/fuzz/*.h)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(TOOL_CFLAGS) -o $@ $< tests/fuzz/replay.c $(LIB_A) $(LIBS)
fuzz: deps-fuzz $(FUZZ_BIN)
	@FUZZ_PARALLEL=$(FUZZ_PARALLEL) sh tests/fuzz/run.sh $(B) -max_total_time=$(FUZZ_SECONDS)
fuzz-long: deps-fuzz $(FUZZ_BIN)
	@FUZZ_PARALLEL=$(FUZZ_PARALLEL) sh tests/fuzz/run.sh $(B) -runs=$(FUZZ_RUNS) \
	  $(if $(FUZZ_LONG_SECONDS),-max_total_time=$(FUZZ_LONG_SECONDS))
fuzz-corpus: all deps-fuzz $(FUZZ_BIN)
	@sh tests/fuzz/seed.sh $(B)
deps-fuzz:
	@sh scripts/deps.sh fuzz
deps-bench:
	@sh scripts/deps.sh bench

# The whole suite again, built with AddressSanitizer and UndefinedBehaviorSanitizer under
# build-asan/ (the install test builds its programs with the same flags).
ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
test-asan:
	@$(MAKE) --no-print-directory B=build-asan CFLAGS="$(ASAN_CFLAGS)" test

# The mutation gate: every one-line mutation of tests/mutants/list, each naming the property
# it breaks, is applied to a copy of the tree (never this one), the tests it names rebuilt
# and run there; a mutation no test notices fails it.  MUTANTS_FILES="core/a.c ..." keeps
# the entries of those files (and of those tests) only.
mutants: all
	@python3 tests/mutants/run.py $(if $(MUTANTS_FILES),--files $(MUTANTS_FILES))

# Invariant campaign in the simulator: SEEDS drawn scenarios from seed FROM over JOBS
# worker processes (pure-link-sim vopr, sim/sim_vopr.h).
SEEDS ?= 10000
FROM  ?= 1
JOBS  ?= 2
campaign: all
	$(SIM_BIN) vopr --seeds $(SEEDS) --from $(FROM) --jobs $(JOBS)

# The core may not allocate, print, read clocks or do I/O: its objects must not even
# reference such symbols.  This runs as part of `make test`.
check-pure: $(CORE_OBJ)
	@bad=$$(nm -u $(CORE_OBJ) | grep -wE 'malloc|calloc|realloc|free|printf|fprintf|puts|fopen|fwrite|write|read|clock_gettime|gettimeofday|time|getrandom|rand|exit|abort' || true); \
	if [ -n "$$bad" ]; then echo "FAIL check-pure: core objects reference:"; echo "$$bad"; exit 1; \
	else echo "check-pure: core objects reference no allocator, I/O, clock or printing"; fi

# The Wireshark dissector (tools/wireshark/README.md): a plugin built against Debian's
# wireshark-dev, which only it and its test need.  `make install-wireshark` puts it in
# Wireshark's plugin folder (the global one as root: Wireshark ignores personal plugins there).
# Never instrumented (make test-asan): tshark, which loads it, has no sanitizer runtime.
WS_PLUGIN := $(B)/wireshark/pure_link.so
WS_SRC    := $(wildcard tools/wireshark/*.c)
WS_PLUGIN_DIR ?= $(if $(filter 0,$(shell id -u)),$(shell pkg-config --variable=plugindir wireshark),$(HOME)/.local/lib/wireshark/plugins/$(shell pkg-config --modversion wireshark | cut -d. -f1,2))/epan
$(WS_PLUGIN): $(WS_SRC) tools/wireshark/pl_dissect.h
	@sh scripts/deps.sh wireshark
	@mkdir -p $(dir $@)
	@echo "  CC    $@"
	@$(CC) -std=gnu11 $(WARN) -Wno-missing-field-initializers $(filter-out -fsanitize=%,$(CFLAGS)) -fPIC -shared $$(pkg-config --cflags wireshark libgcrypt) -o $@ $(WS_SRC) $$(pkg-config --libs wireshark libgcrypt)
install-wireshark: $(WS_PLUGIN)
	install -d $(DESTDIR)$(WS_PLUGIN_DIR)
	install -m 755 $(WS_PLUGIN) $(DESTDIR)$(WS_PLUGIN_DIR)/

test: all $(TEST_BIN) $(B)/interop_sender $(EXAMPLE_BIN) $(LOAD_BIN) $(FUZZ_REPLAY_BIN) check-pure $(WS_PLUGIN)
	@B=$(B) PL_CFLAGS="$(CFLAGS)" sh tests/run.sh "$(T)"

demo: all
	@sh scripts/demo_loopback.sh
	@$(SIM_BIN) sim/scenarios/demo.conf --realtime

# The QUIC peer of scripts/bench_peers.sh (tests/bench/quinn_bulk/), built offline in
# its own folder against Debian's packaged crates, as Debian's own packaging builds them.
QUINN_BIN := $(B)/bench/quinn/quinn-bulk
CARGO ?= $(firstword $(wildcard /usr/bin/cargo) cargo)
RUSTC ?= $(firstword $(wildcard /usr/bin/rustc) rustc)
$(QUINN_BIN): tests/bench/quinn_bulk/Cargo.toml tests/bench/quinn_bulk/src/main.rs
	@mkdir -p $(B)/bench/quinn/src $(B)/bench/quinn/.cargo
	@cp tests/bench/quinn_bulk/Cargo.toml $(B)/bench/quinn/
	@cp tests/bench/quinn_bulk/src/main.rs $(B)/bench/quinn/src/
	@printf '[source.crates-io]\nreplace-with = "debian"\n[source.debian]\ndirectory = "/usr/share/cargo/registry"\n[net]\noffline = true\n' > $(B)/bench/quinn/.cargo/config.toml
	@echo "  CARGO $@"
	@cd $(B)/bench/quinn && RUSTC=$(RUSTC) $(CARGO) build --offline --release --quiet
	@cp $(B)/bench/quinn/target/release/quinn-bulk $@

# pure-link send/recv beside quinn and ngtcp2 on loopback, and the UDP + AEAD ceiling.
bench-peers: all deps-bench $(B)/bench/bench_udp_ceiling $(QUINN_BIN)
	@echo "== scripts/bench_peers.sh (Gbit of payload per CPU-second: pure-link, quinn, ngtcp2)"
	@B=$(B) sh scripts/bench_peers.sh

# The same peers through the simulator's path model at real time (pure-link-sim relay, whose
# own CPU counts for nobody), 50 Mbit/s and RTT 20 ms, where every transport moves the same
# bytes a second: CPU-seconds per GB delivered and pure-link's over each peer's in its round.
bench-relay: all deps-bench $(QUINN_BIN)
	@echo "== scripts/bench_peers.sh RELAY=1 (CPU per GB delivered at 50 Mbit/s, RTT 20 ms)"
	@B=$(B) RELAY=1 sh scripts/bench_peers.sh

bench: all deps-bench $(BENCH_BIN) $(LOAD_BIN)
	@for b in $(BENCH_BIN); do echo "== $$b"; $$b || exit 1; done
	@echo "== tests/bench/callgrind_core.sh (core instructions per packet: a count, not a time)"
	@sh tests/bench/callgrind_core.sh $(B)
	@echo "== tests/bench/callgrind_scale.sh (receiver instructions by wired peers and live runs: a count)"
	@sh tests/bench/callgrind_scale.sh $(B)
	@echo "== scripts/bench_hostile.sh (1,000,000 hostile datagrams at a live receiver)"
	@B=$(B) sh scripts/bench_hostile.sh
	@echo "== scripts/bench_many.sh (1,000 senders, one receiver)"
	@B=$(B) sh scripts/bench_many.sh
	@echo "== sim/m6.sh (M6 grid in the simulator, beside the goals), CUBIC then BBR"
	@sh sim/m6.sh 1 cubic
	@sh sim/m6.sh 1 bbr
	@echo "== sim/share.sh (share next to one TCP CUBIC flow)"
	@sh sim/share.sh
	@$(MAKE) --no-print-directory bench-peers
	@$(MAKE) --no-print-directory bench-relay

# Paths the installed files name (the .pc files, the unit's ExecStart) are PREFIX's;
# DESTDIR only stages them.
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
MAN_DIR          ?= $(PREFIX)/share/man
install: $(LIB_A) $(LIB_SO) $(SHIMS_LIB_A) $(SHIMS_LIB_SO) $(TOOL_BIN) $(MAN_PAGES)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(MAN_DIR)/man1 $(DESTDIR)$(MAN_DIR)/man3 \
	  $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	install -m 644 $(LIB_A) $(SHIMS_LIB_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(SHIMS_LIB_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libpurelink.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libpurelink.so.$(SOVERSION)
	ln -sf libpurelink.so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/libpurelink.so
	ln -sf libpurelink-shims.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libpurelink-shims.so.$(SOVERSION)
	ln -sf libpurelink-shims.so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/libpurelink-shims.so
	install -m 644 core/pure_link.h $(SHIMS_HEADERS) $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' pure-link.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/pure-link.pc
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' pure-link-shims.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/pure-link-shims.pc
	install -m 755 $(TOOL_BIN) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(B)/man/pure-link.1 $(DESTDIR)$(MAN_DIR)/man1/
	install -m 644 $(B)/man/pure_link.3 $(DESTDIR)$(MAN_DIR)/man3/
	sed -e 's|@PREFIX@|$(PREFIX)|' dist/pure-link-recv@.service.in > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/pure-link-recv@.service

clean:
	rm -rf $(B) build-asan

# vidtheque: one plain Makefile. Every dependency is a Debian package found with pkg-config.
#   make                      build ./vidtheque
#   make check                unit tests, then end-to-end tests
#   make bench                speed and memory benchmarks (ratios against baselines)
#   make SANITIZE=address,undefined check
#   make install PREFIX=/usr/local
#   make DEVELOPER=1          warnings are errors

PREFIX ?= /usr/local
# data files (the Silero VAD model): the binary looks there, so it is fixed at build time
DATADIR ?= $(PREFIX)/share/vidtheque
# systemd units (dist/systemd): `make install` puts them here, with the paths filled in
UNITDIR ?= $(PREFIX)/lib/systemd/system
DOCDIR ?= $(PREFIX)/share/doc/vidtheque
CC ?= cc
PKGS = libavformat libavcodec libavutil libswscale libswresample sqlite3 jansson tesseract lept libjpeg pocketsphinx sphinxbase libmicrohttpd uchardet libcurl libpq zlib
# flite (no pkg-config file): its CMU lexicon pronounces the words speech hints add
FLITE_LIBS = -lflite_cmulex -lflite

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS := $(shell pkg-config --libs $(PKGS))
# The front binary links only these: were it to reach any other library's code, its
# link fails (the sections that need the rest are dropped by --gc-sections).
FRONT_LIBS := $(shell pkg-config --libs sqlite3 jansson) -lm

CFLAGS ?= -O2 -g
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter \
       -Wformat=2 -Wvla
ifdef DEVELOPER
WARN += -Werror
endif
# Sections per function and --gc-sections: the front binary (below) keeps only the code
# its commands reach, and so needs none of the media libraries.
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -DVT_DATADIR='"$(DATADIR)"' $(WARN) -Iinclude -Ilib -Isrc $(PKG_CFLAGS) -pthread \
             -ffunction-sections -fdata-sections $(CFLAGS)
ALL_LDFLAGS = -pthread -Wl,--gc-sections -Wl,--as-needed $(LDFLAGS)
LIBS = $(PKG_LIBS) $(FLITE_LIBS) -lm

ifdef SANITIZE
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
ALL_LDFLAGS += -fsanitize=$(SANITIZE)
# the sanitizers' metadata keeps sections alive that --gc-sections would drop: the
# release build is the one that checks the front needs no media library
FRONT_LIBS = $(LIBS)
BUILD = build/san
else
BUILD = build/rel
endif

LIB_SRC := $(sort $(shell find lib -name '*.c'))
CLI_SRC := $(sort $(shell find src -name '*.c'))
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/%.o)

# Two binaries from the same sources: vidtheque (the front: reading commands, linked
# without FFmpeg, Tesseract and PocketSphinx, so it starts in a few milliseconds) runs
# the commands that index or serve by executing vidtheque-full beside it (src/cli/vidtheque.c).
BIN = $(BUILD)/vidtheque
FULL = $(BUILD)/vidtheque-full
FRONT_OBJ := $(filter-out $(BUILD)/src/cli/vidtheque.o,$(CLI_OBJ)) $(BUILD)/src/cli/vidtheque-front.o
UNIT = $(BUILD)/run-unit

all: vidtheque

vidtheque: $(BIN) $(FULL)
	@ln -sf $(BIN) vidtheque

# Made anew each time: `ar r` never drops the member of a source file that was deleted.
$(BUILD)/libvidtheque.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(FULL): $(CLI_OBJ) $(BUILD)/libvidtheque.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libvidtheque.a $(LIBS)

$(BIN): $(FRONT_OBJ) $(BUILD)/libvidtheque.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(FRONT_OBJ) $(BUILD)/libvidtheque.a $(FRONT_LIBS)

$(BUILD)/src/cli/vidtheque-front.o: src/cli/vidtheque.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DVT_FRONT -MMD -MP -c -o $@ $<

$(UNIT): $(UNIT_OBJ) $(BUILD)/libvidtheque.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(UNIT_OBJ) $(BUILD)/libvidtheque.a $(LIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# The web front-end's files are assembled into it (.incbin): the compiler's -MMD does not see them.
# The stylesheet, scripts and icon also go in gzip'ed, once, here (-n: no name or time in
# them, so the build is reproducible): the server sends those to a client that takes gzip.
WEB_GZ := $(patsubst web/%,$(BUILD)/web-gz/%.gz,$(wildcard web/*.css web/*.js web/*.svg))
$(BUILD)/web-gz/%.gz: web/%
	@mkdir -p $(@D)
	gzip -9 -n -c $< > $@.tmp && mv $@.tmp $@
$(BUILD)/src/web/web_assets.o: $(wildcard web/*) $(WEB_GZ)
$(BUILD)/src/web/web_assets.o: ALL_CFLAGS += -DVT_WEB_GZ='"$(BUILD)/web-gz"'

-include $(LIB_OBJ:.o=.d) $(FRONT_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNIT_OBJ:.o=.d)

# Every header compiles on its own.
check-headers:
	@for h in include/*.h $$(cd lib && find . -name '*.h' | sed 's|^\./||'); do \
	  echo "#include \"$${h#include/}\"" | $(CC) $(ALL_CFLAGS) -x c -fsyntax-only - || exit 1; \
	done

# The unit tests, the store's on SQLite and again on a throwaway PostgreSQL (VT_TEST_PG).
unit: $(UNIT)
	OMP_THREAD_LIMIT=1 tests/pg/with-cluster.sh $(UNIT)

e2e: vidtheque
	VIDTHEQUE=$(abspath $(BIN)) tests/run-all.sh --e2e

check: check-headers vidtheque $(UNIT)
	@VIDTHEQUE=$(abspath $(BIN)) UNIT=$(abspath $(UNIT)) tests/run-all.sh

bench: vidtheque
	VIDTHEQUE=$(abspath $(BIN)) bench/run.sh

install: vidtheque install-data install-units
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/vidtheque
	install -m 755 $(FULL) $(DESTDIR)$(PREFIX)/bin/vidtheque-full
	install -m 644 include/vidtheque.h $(DESTDIR)$(PREFIX)/include/vidtheque.h
	install -m 644 $(BUILD)/libvidtheque.a $(DESTDIR)$(PREFIX)/lib/libvidtheque.a

# The data files the binary looks for in DATADIR: the Silero VAD model, and Whisper's
# vocabularies and mel filterbanks (a Hugging Face checkpoint holds neither).
WHISPER_ASSETS = gpt2.tiktoken multilingual.tiktoken mel_filters.npz LICENSE-openai-whisper SOURCE
install-data:
	install -d $(DESTDIR)$(DATADIR) $(DESTDIR)$(DATADIR)/whisper
	install -m 644 tests/data/silero-vad/for-tests-silero-v6.2.0-ggml.bin $(DESTDIR)$(DATADIR)/ggml-silero-v6.2.0.bin
	install -m 644 tests/data/silero-vad/LICENSE $(DESTDIR)$(DATADIR)/LICENSE-silero-vad
	install -m 644 $(WHISPER_ASSETS:%=tests/data/whisper-assets/%) $(DESTDIR)$(DATADIR)/whisper/

# The systemd units: the web application, a worker per instance (vidtheque-worker@N), and the
# hourly update of the lists; @BINDIR@ and @DOCDIR@ become where `make install` puts things.
UNITS_IN = vidtheque-serve.service vidtheque-worker@.service vidtheque-update.service
install-units:
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR)
	for u in $(UNITS_IN); do \
	  sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@DOCDIR@|$(DOCDIR)|g' dist/systemd/$$u.in > $(DESTDIR)$(UNITDIR)/$$u && \
	  chmod 644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	install -m 644 dist/systemd/vidtheque-update.timer $(DESTDIR)$(UNITDIR)/vidtheque-update.timer
	install -m 644 README.md $(DESTDIR)$(DOCDIR)/README.md

clean:
	rm -rf build vidtheque

.PHONY: all vidtheque check check-headers unit e2e bench install install-data install-units clean

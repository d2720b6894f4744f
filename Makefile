# Makefile - builds heapscope: the tracer (libheapscope.so), the reader library and the CLI
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
CC ?= cc
PKG_CONFIG ?= pkg-config

PKGS := libunwind libdw libzstd libmicrohttpd
DEPS_OK := $(shell $(PKG_CONFIG) --exists $(PKGS) 2>/dev/null && echo yes)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
CFLAGS ?= -O2 -g
BASE_CFLAGS := -std=c11 $(WARN) -fPIC -MMD -MP -Iinclude
ifeq ($(DEPS_OK),yes)
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS))
endif

COMMON_SRC := src/common/crc32c.c src/common/ehframe.c
FORMAT_SRC := src/format/encoder.c src/format/builder.c src/format/reader.c src/format/ahead.c src/format/symbolize.c src/format/debuginfo.c src/format/cache.c
TRACER_SRC := $(wildcard src/tracer/*.c)
ANALYSIS_SRC := $(wildcard src/analysis/*.c)
RENDER_SRC := $(wildcard src/render/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
VIEWER_SRC := $(wildcard src/viewer/*.c)
WEB_FILES := $(sort $(wildcard web/*))

# V=1 shows the full commands
ifeq ($(V),1)
Q :=
say :=
else
Q := @
say = @printf '  %-7s %s\n' $(1) $(2);
endif

obj = $(patsubst src/%.c,$(BUILD)/obj/%.o,$(1))
tobj = $(patsubst src/%.c,$(BUILD)/tobj/%.o,$(1))

LIB_TRACER := $(BUILD)/libheapscope.so
LIB_READER := $(BUILD)/libheapscope-reader.a
CLI := $(BUILD)/heapscope

.PHONY: all deps test demo bench install clean fuzz
# pkg-config and the zstd archive are looked up when make reads this file. When packages were
# missing, deps installs them and a second make, reading the file again, builds: one started
# before would link the tracer without zstd.
ifeq ($(DEPS_OK),yes)
all: deps $(LIB_TRACER) $(LIB_READER) $(CLI)
else ifeq ($(HS_DEPS_RETRY),1)
all: deps
	$(error pkg-config finds no '$(PKGS)' after installing their packages: check 'pkg-config --exists $(PKGS)')
else
all: deps
	@$(MAKE) --no-print-directory HS_DEPS_RETRY=1 all
endif

deps:
	@build-aux/deps.sh build

# The tracer is a guest: hidden symbols but the hooks, static TLS, nothing lazy. Link-time
# optimisation lets the writer's loop inline the encoder (5-10% less CPU in traced programs).
$(BUILD)/tobj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) -D_GNU_SOURCE -fvisibility=hidden -ftls-model=initial-exec -fno-omit-frame-pointer -flto -c $< -o $@

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) -c $< -o $@

# zstd linked in, its symbols hidden: the static context the encoder uses (ZSTD_initStaticCCtx) is
# zstd's static-linking-only API, whose layout may change between versions, and a program that
# brings its own libzstd.so.1 must not lend it to us, nor get ours in its place.
ZSTD_ARCHIVE := $(shell $(CC) -print-file-name=libzstd.a 2>/dev/null)
ZSTD_STATIC := -Wl,--exclude-libs,libzstd.a $(ZSTD_ARCHIVE)
ZSTD_TRACER := $(if $(filter /%,$(ZSTD_ARCHIVE)),$(ZSTD_STATIC),$(shell $(PKG_CONFIG) --libs libzstd))

$(LIB_TRACER): $(call tobj,$(TRACER_SRC) $(COMMON_SRC) src/format/encoder.c src/format/builder.c)
	$(call say,LINK,$@)$(CC) $(BASE_CFLAGS) $(CFLAGS) -flto $(LDFLAGS) -shared -Wl,--no-undefined -Wl,-z,now -Wl,-z,nodelete -Wl,-soname,libheapscope.so -o $@ $^ \
		$(ZSTD_TRACER) $(shell $(PKG_CONFIG) --libs libunwind) -lm -ldl -lpthread

$(LIB_READER): $(call obj,$(COMMON_SRC) src/common/shellword.c $(FORMAT_SRC) $(ANALYSIS_SRC) $(RENDER_SRC))
	@rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

READER_LIBS = $(shell $(PKG_CONFIG) --libs libdw libzstd) -liberty -lstdc++ -lm -lpthread

$(CLI): $(call obj,$(CLI_SRC) $(VIEWER_SRC)) $(BUILD)/obj/gen/assets.o $(LIB_READER)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) -o $@ $^ $(READER_LIBS) -ldl

# The server loads libmicrohttpd when it starts (src/viewer/server.c): by the name the linker would have used.
MHD_SONAME := $(shell f=$$($(PKG_CONFIG) --variable=libdir libmicrohttpd 2>/dev/null)/libmicrohttpd.so; \
	objdump -p "$$f" 2>/dev/null | awk '$$1 == "SONAME" { print $$2 }')
$(BUILD)/obj/viewer/server.o: CFLAGS += $(if $(MHD_SONAME),-DHS_MHD_SONAME='"$(MHD_SONAME)"')

# The viewer's page (web/*) embedded in the binary: no files to install, no network at run time.
$(BUILD)/gen/assets.c: build-aux/embed.sh $(WEB_FILES)
	@mkdir -p $(dir $@)
	$(call say,EMBED,$@)build-aux/embed.sh $@ $(WEB_FILES)

$(BUILD)/obj/gen/assets.o: $(BUILD)/gen/assets.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) $(BASE_CFLAGS) -Isrc $(CFLAGS) -c $< -o $@

test: deps
	@build-aux/deps.sh test
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) tests/run.sh

demo: deps
	@build-aux/deps.sh demo
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) demo/run.sh

bench: deps
	@build-aux/deps.sh bench
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) bench/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/heapscope $(DESTDIR)$(PREFIX)/include/heapscope
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/heapscope
	install -m 755 $(LIB_TRACER) $(DESTDIR)$(PREFIX)/lib/heapscope/libheapscope.so
	install -m 644 $(LIB_READER) $(DESTDIR)$(PREFIX)/lib/heapscope/libheapscope-reader.a
	install -m 644 include/heapscope/*.h $(DESTDIR)$(PREFIX)/include/heapscope/

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

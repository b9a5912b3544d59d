/* fuzz_config.c: libFuzzer target for the `pure-link` tool's two file readers: the
 * receiver's config file (tool_config_load, shims/tool/tool_config.c) and the key file
 * (tool_key_load, shims/tool/tool_keys.c).  Every input is given to both, as the bytes of a
 * file.
 *
 *   build/fuzz_config -max_len=8192 tests/fuzz/corpus/config
 *
 * The file is a memfd read through its /proc/self/fd name, so the readers open, stat and
 * read a real (mode 0600, regular) file as they would on disk.  Beyond not crashing, what
 * they accept is checked against what the bytes say:
 *   - a config taken has a peer and an input; every name is 1..64 bytes without a blank or
 *     '#'; no two peers share a key, no two inputs a name; the sources of a peer are
 *     '\n'-separated names;
 *   - a key taken is exactly 64 hex digits (and perhaps a newline), and the secret read is
 *     what they spell.
 * The readers' one-line messages go to stderr through stdio; the target points stdio's
 * stderr at /dev/null (the sanitizers and libFuzzer write to descriptor 2 directly). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int file_fd = -1;
static char file_path[64];

static void require(int cond) {
    if (!cond) abort();
}

static void setup(void) {
    file_fd = memfd_create("pure-link-fuzz", MFD_CLOEXEC);
    require(file_fd >= 0 && fchmod(file_fd, 0600) == 0);
    snprintf(file_path, sizeof file_path, "/proc/self/fd/%d", file_fd);
    FILE *null = fopen("/dev/null", "w");
    require(null != NULL);
    stderr = null;
}

static int name_ok(const char *s, size_t len) {
    return len >= 1 && len <= PURE_LINK_NAME_MOST && strcspn(s, " \t\r\n#") >= len;
}

static void check_config(const tool_config *c) {
    require(c->peers_len >= 1 && c->peers_len <= TOOL_PEERS_MOST);
    require(c->inputs_len >= 1 && c->inputs_len <= TOOL_INPUTS_MOST);
    for (size_t i = 0; i < c->peers_len; i++) {
        for (size_t k = 0; k < i; k++) require(memcmp(c->peers[i].key, c->peers[k].key, 32) != 0);
        for (const char *s = c->peers[i].sources;; s++) {
            size_t len = strcspn(s, "\n");
            require(name_ok(s, len));
            s += len;
            if (*s == 0) break;
        }
    }
    for (size_t i = 0; i < c->inputs_len; i++) {
        const tool_input *in = &c->inputs[i];
        require(name_ok(in->name, strlen(in->name)) && strlen(in->dir) >= 1);
        for (size_t k = 0; k < i; k++) require(strcmp(in->name, c->inputs[k].name) != 0);
    }
}

static int hex_value(uint8_t ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* The key the bytes spell, if they are one: 64 hex digits, then nothing or a newline. */
static int key_of(const uint8_t *data, size_t size, uint8_t key[32]) {
    if (size != 64 && !(size == 65 && data[64] == '\n')) return -1;
    for (int i = 0; i < 32; i++) {
        int hi = hex_value(data[2 * i]), lo = hex_value(data[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (file_fd < 0) setup();
    require(ftruncate(file_fd, 0) == 0);
    require(size == 0 || pwrite(file_fd, data, size, 0) == (ssize_t)size);

    tool_config *c = calloc(1, sizeof *c);
    require(c != NULL);
    int code = tool_config_load(file_path, c);
    require(code == TOOL_OK || code == TOOL_ERR_FILE);
    if (code == TOOL_OK) check_config(c);
    tool_config_free(c);
    free(c);

    uint8_t secret[32], want[32];
    code = tool_key_load(file_path, secret);
    require(code == TOOL_OK || code == TOOL_ERR_FILE);
    const int is_key = key_of(data, size, want) == 0;
    require((code == TOOL_OK) == is_key);
    if (is_key) require(memcmp(secret, want, 32) == 0);
    return 0;
}

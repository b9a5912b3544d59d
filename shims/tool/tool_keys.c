/* tool_keys.c: key files of the `pure-link` tool: 64 lowercase hex digits of the X25519
 * secret key and a newline, mode 0600.  A new file appears whole or not at all: it is
 * written under a temporary name, made durable, then linked to its name (which fails if
 * the name exists, so that a key is never overwritten). */
#define _GNU_SOURCE
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tool_key_generate(const char *path, uint8_t public_out[32]) {
    uint8_t secret[32];
    if (tool_random(secret, sizeof secret) != 0) return TOOL_ERR_SYSTEM;
    char text[TOOL_KEY_FILE_BYTES + 1];
    tool_hex(secret, 32, text);
    text[64] = '\n', text[65] = 0;
    pure_link_crypto_default()->x25519_base(public_out, secret);

    char *copy = strdup(path), tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/.pure-link-key.XXXXXX", dirname(copy));
    free(copy);
    int fd = mkstemp(tmp); /* mode 0600 */
    if (fd < 0) {
        tool_log("key file %s: %s", path, strerror(errno));
        return TOOL_ERR_FILE;
    }
    int ok = write(fd, text, TOOL_KEY_FILE_BYTES) == (ssize_t)TOOL_KEY_FILE_BYTES && fsync(fd) == 0;
    int e = errno;
    close(fd);
    if (ok && link(tmp, path) != 0) ok = 0, e = errno;
    unlink(tmp);
    memset(secret, 0, sizeof secret), memset(text, 0, sizeof text);
    if (!ok) {
        tool_log("key file %s: %s", path, e == EEXIST ? "exists (a key is never overwritten)" : strerror(e));
        return e == EEXIST ? TOOL_ERR_FILE : TOOL_ERR_SYSTEM;
    }
    return TOOL_OK;
}

int tool_key_load(const char *path, uint8_t secret_out[32]) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tool_log("key file %s: %s", path, strerror(errno));
        return TOOL_ERR_FILE;
    }
    struct stat st;
    char text[TOOL_KEY_FILE_BYTES + 2];
    ssize_t n = 0;
    int code = TOOL_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        tool_log("key file %s: not a regular file", path);
        code = TOOL_ERR_FILE;
    } else if (st.st_mode & 077) {
        tool_log("key file %s: mode %04o lets others read the secret key; chmod 600 %s", path,
                 (unsigned)(st.st_mode & 07777), path);
        code = TOOL_ERR_FILE;
    } else {
        n = read(fd, text, sizeof text - 1);
        if (n >= 0) text[n] = 0;
        if (n < 64 || (n > 64 && !(n == 65 && text[64] == '\n'))) {
            tool_log("key file %s: not a pure-link key (want 64 hex digits and a newline)", path);
            code = TOOL_ERR_FILE;
        } else {
            text[64] = 0;
            if (tool_parse_key_hex(text, secret_out) != 0) {
                tool_log("key file %s: not a pure-link key (want 64 hex digits and a newline)", path);
                code = TOOL_ERR_FILE;
            }
        }
    }
    memset(text, 0, sizeof text);
    close(fd);
    return code;
}

/* pure-link keygen FILE: writes a new secret key, prints its public key. */
int tool_keygen_main(int argc, char **argv) {
    if (argc != 2 || argv[1][0] == '-') {
        tool_log("usage: pure-link keygen FILE (see pure-link help)");
        return TOOL_ERR_USAGE;
    }
    uint8_t pub[32];
    int code = tool_key_generate(argv[1], pub);
    if (code != TOOL_OK) return code;
    char hex[65];
    tool_hex(pub, 32, hex);
    printf("%s\n", hex);
    return TOOL_OK;
}

/* pure-link pub FILE: the public key of a secret key file. */
int tool_pub_main(int argc, char **argv) {
    if (argc != 2 || argv[1][0] == '-') {
        tool_log("usage: pure-link pub FILE (see pure-link help)");
        return TOOL_ERR_USAGE;
    }
    uint8_t secret[32], pub[32];
    int code = tool_key_load(argv[1], secret);
    if (code != TOOL_OK) return code;
    pure_link_crypto_default()->x25519_base(pub, secret);
    memset(secret, 0, sizeof secret);
    char hex[65];
    tool_hex(pub, 32, hex);
    printf("%s\n", hex);
    return TOOL_OK;
}

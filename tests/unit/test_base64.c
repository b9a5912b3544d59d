/* test_base64.c: the tool's base64 encoder (tool_base64, shims/tool/tool_util.c, which
 * `pure-link cat --json` writes records with): RFC 4648's test vectors, and libsodium's
 * encoder's output (the one cat used before) on random inputs of every length up to
 * 3 x 256 + 2 and of a few large ones. */
#include <sodium.h>
#include <stdlib.h>

#include "harness.h"
#include "tool.h"

#define RANDOM_LEN_MOST (3u * 256u + 2u)
static const size_t large_lens[] = {48u << 10, (48u << 10) + 1, (48u << 10) + 2, 1u << 20};

static void rfc4648_vectors(void) {
    static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        char out[16];
        memset(out, 'x', sizeof out);
        size_t n = tool_base64((const uint8_t *)in[i], strlen(in[i]), out);
        CHECK_EQ_U(n, strlen(want[i]));
        CHECK(strcmp(out, want[i]) == 0);  /* and the NUL after it */
    }
    /* every character of the alphabet, in order, from the bytes that make it */
    static const uint8_t all[] = {0x00, 0x10, 0x83, 0x10, 0x51, 0x87, 0x20, 0x92, 0x8b, 0x30, 0xd3, 0x8f,
                                  0x41, 0x14, 0x93, 0x51, 0x55, 0x97, 0x61, 0x96, 0x9b, 0x71, 0xd7, 0x9f,
                                  0x82, 0x18, 0xa3, 0x92, 0x59, 0xa7, 0xa2, 0x9a, 0xab, 0xb2, 0xdb, 0xaf,
                                  0xc3, 0x1c, 0xb3, 0xd3, 0x5d, 0xb7, 0xe3, 0x9e, 0xbb, 0xf3, 0xdf, 0xbf};
    char out[TOOL_BASE64_LEN(sizeof all)];
    CHECK_EQ_U(tool_base64(all, sizeof all, out), 64);
    CHECK(strcmp(out, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") == 0);
}

/* tool_base64 of len random bytes equals sodium_bin2base64's, and writes nothing past its NUL. */
static void same_as_sodium(const uint8_t *in, size_t len, char *ours, char *theirs) {
    size_t room = TOOL_BASE64_LEN(len);
    CHECK_EQ_U(room, sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL));
    memset(ours, 'x', room + 1);
    size_t n = tool_base64(in, len, ours);
    sodium_bin2base64(theirs, room, in, len, sodium_base64_VARIANT_ORIGINAL);
    CHECK_EQ_U(n, room - 1);
    CHECK_EQ_U(n, strlen(theirs));
    CHECK(memcmp(ours, theirs, room) == 0);
    CHECK(ours[room] == 'x');
}

static void random_inputs_match_libsodium(void) {
    CHECK(sodium_init() >= 0);
    size_t most = large_lens[sizeof large_lens / sizeof large_lens[0] - 1];
    uint8_t *in = malloc(most);
    char *ours = malloc(TOOL_BASE64_LEN(most) + 1), *theirs = malloc(TOOL_BASE64_LEN(most));
    CHECK(in && ours && theirs);
    for (size_t len = 0; len <= RANDOM_LEN_MOST; len++) {
        randombytes_buf(in, len);
        same_as_sodium(in, len, ours, theirs);
    }
    for (size_t i = 0; i < sizeof large_lens / sizeof large_lens[0]; i++) {
        randombytes_buf(in, large_lens[i]);
        same_as_sodium(in, large_lens[i], ours, theirs);
    }
    free(in), free(ours), free(theirs);
}

TEST_MAIN(TEST_CASE(rfc4648_vectors), TEST_CASE(random_inputs_match_libsodium))

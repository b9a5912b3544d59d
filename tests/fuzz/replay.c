/* replay.c: a fuzz target's entry point run over files, without libFuzzer.  make test
 * builds one per target (build/fuzz-replay/NAME, with the plain compiler, and with ASan
 * under make test-asan) and tests/sh/test_fuzz_corpus.sh runs every committed corpus input
 * through it, so an input that once made a target abort stays a regression test.
 * Each input goes to the target in a buffer of exactly its size, allocated for it alone (as
 * libFuzzer does), so that ASan sees a read one byte past its end.
 * Usage: fuzz-replay/NAME FILE...; exit 0 when every file ran (a failed check aborts). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define REPLAY_INPUT_MOST (1u << 20) /* larger than any target's -max_len */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads the file at `path` into a new buffer of exactly its size; NULL (and a line) if it
 * cannot, or if it is longer than REPLAY_INPUT_MOST. */
static uint8_t *read_exact(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (f == NULL || fstat(fileno(f), &st) != 0) {
        perror(path);
        if (f) fclose(f);
        return NULL;
    }
    if (st.st_size > REPLAY_INPUT_MOST) {
        fprintf(stderr, "%s: longer than %u bytes\n", path, REPLAY_INPUT_MOST);
        fclose(f);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n ? n : 1);  /* an empty input still gets a pointer of its own */
    int whole = buf != NULL && fread(buf, 1, n, f) == n && fgetc(f) == EOF;
    fclose(f);
    if (!whole) {
        fprintf(stderr, "%s: could not read its %zu bytes\n", path, n);
        free(buf);
        return NULL;
    }
    *size = n;
    return buf;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        size_t n = 0;
        uint8_t *buf = read_exact(argv[i], &n);
        if (buf == NULL) return 2;
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
    }
    printf("%d inputs ran\n", argc - 1);
    return 0;
}

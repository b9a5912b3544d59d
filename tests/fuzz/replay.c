/* replay.c: a fuzz target's entry point run over files, without libFuzzer.  make test
 * builds one per target (build/fuzz-replay/NAME, with the plain compiler, and with ASan
 * under make test-asan) and tests/sh/test_fuzz_corpus.sh runs every committed corpus input
 * through it, so an input that once made a target abort stays a regression test.
 * Usage: fuzz-replay/NAME FILE...; exit 0 when every file ran (a failed check aborts). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define REPLAY_INPUT_MOST (1u << 20) /* larger than any target's -max_len */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
    static uint8_t buf[REPLAY_INPUT_MOST];
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (f == NULL) {
            perror(argv[i]);
            return 2;
        }
        const size_t n = fread(buf, 1, sizeof buf, f);
        const int too_long = n == sizeof buf && fgetc(f) != EOF;
        fclose(f);
        if (too_long) {
            fprintf(stderr, "%s: longer than %u bytes\n", argv[i], REPLAY_INPUT_MOST);
            return 2;
        }
        LLVMFuzzerTestOneInput(buf, n);
    }
    printf("%d inputs ran\n", argc - 1);
    return 0;
}

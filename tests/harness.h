/* tests/harness.h: a table of named test cases, each runnable alone.
 *
 * A test program defines `TESTS` (a list of TEST_CASE(name) entries) and includes this
 * file once at the end, after its test functions.  The program then:
 *   prog --list        prints one case name a line;
 *   prog NAME          runs that case, exit 0 on pass, 1 on failure and TEST_SKIP_EXIT (77,
 *                      as automake's drivers read it) when SKIP(why) said it cannot run here;
 *   prog               runs every case and prints a summary line.
 * tests/run.sh runs every case of every program in its own process, so a crash fails only
 * that case.  CHECK() stops the case at the first failed condition and says where. */
#ifndef PURE_LINK_TEST_HARNESS_H
#define PURE_LINK_TEST_HARNESS_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case;

static jmp_buf test_jump;
static int test_failed, test_skipped;

/* A case that cannot run on this machine (no io_uring, no root, no AES-NI) says why on one
 * line and ends with this exit code: tests/run.sh counts it skipped, and failed under CI=true. */
#define TEST_SKIP_EXIT 77

static inline void test_fail_at(const char *file, int line, const char *what) {
    fprintf(stderr, "  %s:%d: check failed: %s\n", file, line, what);
    test_failed = 1;
    longjmp(test_jump, 1);
}

static inline void test_skip(const char *why) {
    fprintf(stderr, "skipped: %s\n", why);
    test_skipped = 1;
    longjmp(test_jump, 1);
}
#define SKIP(why) test_skip(why)

#define CHECK(cond) do { if (!(cond)) test_fail_at(__FILE__, __LINE__, #cond); } while (0)
#define CHECK_EQ_U(a, b) do { unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
    if (a_ != b_) { fprintf(stderr, "  %s = %llu, %s = %llu\n", #a, a_, #b, b_); \
        test_fail_at(__FILE__, __LINE__, #a " == " #b); } } while (0)
#define CHECK_MEM(a, b, n) CHECK(memcmp((a), (b), (n)) == 0)
#define TEST_CASE(fn) { #fn, fn }

static inline int test_run_one(const test_case *t) {
    test_failed = test_skipped = 0;
    if (setjmp(test_jump) == 0) t->fn();
    return test_failed ? 1 : test_skipped ? TEST_SKIP_EXIT : 0;
}

static inline int test_main(const test_case *cases, size_t n, int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < n; i++) printf("%s\n", cases[i].name);
        return 0;
    }
    if (argc > 1) {
        for (size_t i = 0; i < n; i++)
            if (strcmp(cases[i].name, argv[1]) == 0) return test_run_one(&cases[i]);
        fprintf(stderr, "no test case named %s\n", argv[1]);
        return 2;
    }
    size_t failed = 0, skipped = 0;
    for (size_t i = 0; i < n; i++) {
        int r = test_run_one(&cases[i]);
        printf("%s %s\n", r == TEST_SKIP_EXIT ? "SKIP" : r ? "FAIL" : "PASS", cases[i].name);
        skipped += r == TEST_SKIP_EXIT;
        failed += r == 1;
    }
    printf("%zu passed, %zu failed, %zu skipped\n", n - failed - skipped, failed, skipped);
    return failed ? 1 : 0;
}

#define TEST_MAIN(...) \
    static const test_case test_table[] = { __VA_ARGS__ }; \
    int main(int argc, char **argv) { \
        return test_main(test_table, sizeof test_table / sizeof test_table[0], argc, argv); }

#endif

/* tmp_dirs.h: fresh directories for the store's tests, removed (and a tmpfs a test left
 * mounted there unmounted) at exit.  At most TMP_DIRS_MOST per test process, which runs
 * one case.  Header-only; include it once. */
#ifndef PL_TEST_TMP_DIRS_H
#define PL_TEST_TMP_DIRS_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_DIRS_MOST 4

static char tmp_dirs[TMP_DIRS_MOST][256];
static int tmp_dirs_len;

static int tmp_rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}
static void tmp_cleanup(void) {
    for (int i = 0; i < tmp_dirs_len; i++) {
        umount2(tmp_dirs[i], MNT_DETACH);  /* a test's tmpfs, if it left one mounted */
        nftw(tmp_dirs[i], tmp_rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
}
/* A fresh directory: on the disk (base NULL: $TMPDIR or /tmp) or under base. */
static const char *tmp_dir(const char *base) {
    const char *t = base ? base : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    if (tmp_dirs_len == TMP_DIRS_MOST) { fprintf(stderr, "more than %d directories\n", TMP_DIRS_MOST); abort(); }
    char *d = tmp_dirs[tmp_dirs_len];
    snprintf(d, sizeof tmp_dirs[0], "%s/pl_store_test_XXXXXX", t);
    if (mkdtemp(d) == NULL) { perror("mkdtemp"); abort(); }
    if (tmp_dirs_len++ == 0) atexit(tmp_cleanup);
    return d;
}

#endif

/* store_lock.c: one receiver per store directory and per memo.  Two receivers appending to
 * one stream file each believe their own end of it, and overwrite each other's records
 * after claiming them stored; two writing one memo restore each other's secrets.  Each
 * input directory and the memo has a lock file beside it, held with flock() for as long as
 * the store is open (the kernel lets go of it when the process ends, even by kill -9), and
 * holding the holder's process id so that a second receiver can say whom it met. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "store_internal.h"

#define LOCK_PID_BYTES 24u /* a decimal process id and a newline, with room */

int st_lock_take(int at_fd, const char *name, const char *shown, const char *what, char *err, size_t err_len) {
    int fd = openat(at_fd, name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return st_err(err, err_len, -errno, "%s: open the lock file: %s", shown, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char pid[LOCK_PID_BYTES] = {0};
        if (e == EWOULDBLOCK) st_read_all(fd, pid, sizeof pid - 1, 0);  /* short is fine: NUL-filled */
        close(fd);
        if (e != EWOULDBLOCK) return st_err(err, err_len, -e, "%s: lock: %s", shown, strerror(e));
        long holder = strtol(pid, NULL, 10);
        if (holder > 0)
            return st_err(err, err_len, -EWOULDBLOCK, "%s is locked by process %ld: another receiver uses %s", shown,
                          holder, what);
        return st_err(err, err_len, -EWOULDBLOCK, "%s is locked by another process: another receiver uses %s", shown,
                      what);
    }
    char pid[LOCK_PID_BYTES];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    int rc = ftruncate(fd, 0) != 0 ? -errno : st_write_all(fd, pid, (size_t)n, 0);
    if (rc != 0) {
        close(fd);
        return st_err(err, err_len, rc, "%s: write the lock file: %s", shown, strerror(-rc));
    }
    return fd;
}

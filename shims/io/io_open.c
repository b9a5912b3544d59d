/* io_open.c: the backend a host asked for by name (pl_io_open in pl_io.h). */
#include "pl_io.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int pl_io_open(const char *kind, pl_io **out, const pl_io_options *options, char *err, size_t err_len) {
    if (strcmp(kind, "posix") == 0) return pl_io_posix_open(out, options, err, err_len);
    if (strcmp(kind, "uring") == 0) return pl_io_uring_open(out, options, err, err_len);
    if (strcmp(kind, "auto") != 0) {
        snprintf(err, err_len, "--io %s: not auto, posix or uring", kind);
        return -EINVAL;
    }
    /* io_uring where the kernel lets us have it; any refusal (or a kernel without what it
     * needs) falls back to plain sockets, whose error, if they fail too, is the one told. */
    int r = pl_io_uring_open(out, options, err, err_len);
    /* An address in use is the socket's answer, which POSIX would give too; and since a
     * socket that io_uring held may come free between the two tries, falling back then
     * would have the process run over POSIX where io_uring works. */
    if (r == -EADDRINUSE) return r;
    return r == 0 ? 0 : pl_io_posix_open(out, options, err, err_len);
}

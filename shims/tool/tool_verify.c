/* tool_verify.c: `pure-link verify STORE_DIR|FILE...`: checks every frame of the record files
 * (its tag, length and CRC32C, by the store's own check) and says per file where the first
 * frame that is not whole and valid starts, and whether it is a torn tail (no valid frame
 * after it: what a stop in the middle of a write leaves, never acknowledged, cut by the
 * receiver's next open) or damage (a valid frame follows: records after it would be lost at
 * the receiver's next open, which cuts the file there).  A record file's checkpoint index
 * (.pli beside it, STORE.md) is checked as the receiver's open checks it before it trusts it
 * (magic, size, CRC32C, and a whole valid frame of its length ending where it says), and
 * verify adds that this end is where a frame it read ends: an index that fails says so in a
 * line of its own (the receiver reads the whole record file instead: no record is lost). */
#define _GNU_SOURCE
#include "tool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct verify_sum {
    uint64_t files, records, record_bytes, file_bytes, bad, torn, indexes, indexes_bad;
    int rc;
} verify_sum;

/* The checkpoint index beside a record file: 1 with *h when it is there and decodes, 0 when
 * there is none, -1 when it does not decode (*why), -errno when it cannot be read. */
static int index_load(const char *plr, char *pli, size_t pli_len, pl_store_index_head *h, const char **why) {
    size_t n = strlen(plr);
    if (n < 4 || strcmp(plr + n - 4, ".plr") != 0 || n + 1 > pli_len) return 0;  /* a FILE not named by the store */
    memcpy(pli, plr, n + 1);
    pli[n - 1] = 'i';
    FILE *f = fopen(pli, "rb");
    if (f == NULL) return errno == ENOENT ? 0 : -errno;
    static uint8_t b[PL_STORE_INDEX_BYTES_MOST + 1];
    size_t len = fread(b, 1, sizeof b, f);
    int rc = ferror(f) ? -EIO : len > PL_STORE_INDEX_BYTES_MOST ? (*why = "larger than any index", -1)
                                                                 : pl_store_index_read(b, len, h, why) == 0 ? 1 : -1;
    fclose(f);
    return rc;
}

/* One line for the index: `end_ok` says a whole valid frame of h->last_bytes ended at h->end
 * (or h->end is the header's end and h->last_bytes 0). */
static void index_report(const char *pli, int rc, const pl_store_index_head *h, const char *why, int end_ok,
                         verify_sum *v) {
    if (rc == 0) return;
    if (rc < -1) {
        tool_log("%s: %s", pli, strerror(-rc));
        if (v->rc == TOOL_OK) v->rc = TOOL_ERR_SYSTEM;
        return;
    }
    v->indexes++;
    if (rc == 1 && end_ok) {
        printf("%s: index ok: %llu runs, to offset %llu\n", pli, (unsigned long long)h->runs,
               (unsigned long long)h->end);
        return;
    }
    if (rc == 1) why = "no whole frame of the length it names ends where it says";
    printf("%s: bad index: %s (the receiver ignores it and reads the whole record file at its next open)\n", pli, why);
    v->indexes_bad++;
}

/* One file: a line on stdout, the totals in *v. */
static void verify_file(const char *path, verify_sum *v) {
    tool_plr r;
    int rc = tool_plr_open(&r, path);
    if (rc < 0) {
        tool_log("%s: %s", path, strerror(-rc));
        if (v->rc == TOOL_OK) v->rc = TOOL_ERR_SYSTEM;
        tool_plr_close(&r);
        return;
    }
    v->files++;
    if (rc == 1) {
        printf("%s: bad header: not a record file (magic, size, names or CRC32C)\n", path);
        v->bad++;
        tool_plr_close(&r);
        return;
    }
    pl_store_frame f;
    const uint8_t *data;
    const char *why = "", *index_why = "";
    char pli[4096];
    pl_store_index_head h = {0};
    int index_rc = index_load(path, pli, sizeof pli, &h, &index_why);
    int end_ok = index_rc == 1 && h.end == r.pos && h.last_bytes == 0;
    uint64_t records = 0, bytes = 0, next = 0;
    struct stat st;
    int after;
    do {  /* after == 2: the frame was being written by a receiver, and is whole now */
        while ((rc = tool_plr_next(&r, &f, &data, &why)) == 1) {
            records++, bytes += f.len;
            if (index_rc == 1 && r.pos == h.end) end_ok = h.last_bytes == PL_STORE_FRAME_HEADER_BYTES + (uint64_t)f.len;
        }
        after = rc == TOOL_PLR_IO ? -r.err : fstat(r.fd, &st) != 0 ? -errno : (uint64_t)st.st_size == r.pos ? 3
                                                                                : tool_plr_after(&r, &next);
    } while (after == 2);
    v->records += records, v->record_bytes += bytes, v->file_bytes += r.pos;
    if (after < 0) {
        tool_log("%s: %s (after %llu records)", path, strerror(-after), (unsigned long long)records);
        if (v->rc == TOOL_OK) v->rc = TOOL_ERR_SYSTEM;
    } else if (after == 3) {
        printf("%s: ok, %llu records, %llu bytes\n", path, (unsigned long long)records, (unsigned long long)r.pos);
    } else if (after == 1) {
        printf("%s: bad frame at offset %llu: %s (a valid frame follows at offset %llu; %llu records before it)\n",
               path, (unsigned long long)r.pos, why, (unsigned long long)next, (unsigned long long)records);
        v->bad++;
    } else {
        printf("%s: torn tail at offset %llu: %s (%llu bytes after %llu whole records; never acknowledged, the "
               "receiver cuts them at its next open)\n", path, (unsigned long long)r.pos, why,
               (unsigned long long)((uint64_t)st.st_size - r.pos), (unsigned long long)records);
        v->torn++;
    }
    index_report(pli, index_rc, &h, index_why, end_ok, v);
    tool_plr_close(&r);
}

int tool_verify_main(int argc, char **argv) {
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] != 0; i++) {
        if (strcmp(argv[i], "--") == 0) { i++; break; }
        tool_log("unknown option %s (see pure-link help verify)", argv[i]);
        return TOOL_ERR_USAGE;
    }
    if (i >= argc) {
        tool_log("a STORE_DIR or FILE is needed (see pure-link help verify)");
        return TOOL_ERR_USAGE;
    }
    verify_sum v = {0};
    for (; i < argc; i++) {
        struct stat st;
        char **names = NULL;
        size_t n = 0;
        int rc = stat(argv[i], &st) != 0 ? -errno : S_ISDIR(st.st_mode) ? tool_plr_list(argv[i], &names, &n) : 1;
        if (rc == 1) verify_file(argv[i], &v);
        if (rc == -EMFILE) tool_log("%s: more than %u record files", argv[i], TOOL_CAT_FILES_MOST);
        else if (rc < 0) tool_log("%s: %s", argv[i], strerror(-rc));
        if (rc < 0 && v.rc == TOOL_OK) v.rc = TOOL_ERR_SYSTEM;
        if (rc == 0 && n == 0) tool_log("%s: no record file (*.plr) in it", argv[i]);
        for (size_t k = 0; k < n; k++) {
            if (rc == 0) verify_file(names[k], &v);  /* a directory past the limit is not checked */
            free(names[k]);
        }
        free(names);
    }
    printf("verified %llu files: %llu records, %llu bytes of records (%llu of the files), %llu indexes (%llu bad); "
           "%llu with a bad frame, %llu with a torn tail\n", (unsigned long long)v.files,
           (unsigned long long)v.records, (unsigned long long)v.record_bytes, (unsigned long long)v.file_bytes,
           (unsigned long long)v.indexes, (unsigned long long)v.indexes_bad, (unsigned long long)v.bad,
           (unsigned long long)v.torn);
    return v.bad > 0 ? TOOL_ERR_CORRUPT : v.rc;
}

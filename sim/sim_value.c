/* sim_value.c: exact decimal parsing with units; see sim_value.h. */
#include "sim_value.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SIM_VALUE_DIGITS_MOST 18 /* digits of a decimal (integer and fraction): fits int64 */

typedef struct decimal {
    uint64_t mantissa;  /* all digits, fraction included */
    uint32_t scale;     /* digits after the point: value = mantissa / 10^scale */
} decimal;

/* Parses "123", "1.25", ".5"; *end points after it.  -1 if there are no digits or too many. */
static int parse_decimal(const char *s, decimal *d, const char **end) {
    d->mantissa = 0;
    d->scale = 0;
    int digits = 0, seen_point = 0;
    for (;; s++) {
        if (*s == '.' && !seen_point) {
            seen_point = 1;
            continue;
        }
        if (*s == '_' && digits > 0) continue; /* 1_000_000 reads as 1000000 */
        if (!isdigit((unsigned char)*s)) break;
        if (++digits > SIM_VALUE_DIGITS_MOST) return -1;
        d->mantissa = d->mantissa * 10 + (uint64_t)(*s - '0');
        if (seen_point) d->scale++;
    }
    *end = s;
    return digits > 0 ? 0 : -1;
}

/* value * unit / divisor, exactly, rounded to nearest; -1 on overflow. */
static int scale_decimal(const decimal *d, uint64_t unit, uint64_t divisor, uint64_t *out) {
    unsigned __int128 den = divisor;
    for (uint32_t i = 0; i < d->scale; i++) den *= 10;
    unsigned __int128 num = (unsigned __int128)d->mantissa * unit;
    unsigned __int128 q = (num + den / 2) / den;
    if (q > UINT64_MAX) return -1;
    *out = (uint64_t)q;
    return 0;
}

typedef struct unit {
    const char *name;
    uint64_t factor;
} unit;

/* Looks up the unit in `units` (case-sensitive first, then insensitive). */
static int find_unit(const char *text, const unit *units, uint64_t *factor) {
    for (const unit *u = units; u->name; u++)
        if (strcmp(text, u->name) == 0) { *factor = u->factor; return 0; }
    for (const unit *u = units; u->name; u++)
        if (strcasecmp(text, u->name) == 0) { *factor = u->factor; return 0; }
    return -1;
}

static int parse_with_units(const char *text, const unit *units, int unit_required, uint64_t *out) {
    decimal d;
    const char *end;
    while (isspace((unsigned char)*text)) text++;
    if (parse_decimal(text, &d, &end) != 0) return -1;
    while (isspace((unsigned char)*end)) end++;
    char suffix[16];
    size_t n = strlen(end);
    while (n > 0 && isspace((unsigned char)end[n - 1])) n--;
    if (n >= sizeof suffix) return -1;
    memcpy(suffix, end, n);
    suffix[n] = 0;
    uint64_t factor = 1;
    if (n == 0) {
        if (unit_required && d.mantissa != 0) return -1;
    } else if (find_unit(suffix, units, &factor) != 0) {
        return -1;
    }
    return scale_decimal(&d, factor, 1, out);
}

int sim_value_duration_ns(const char *text, uint64_t *out) {
    static const unit units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000ull},
                                 {"min", 60000000000ull}, {NULL, 0}};
    return parse_with_units(text, units, 1, out);
}

int sim_value_rate_bps(const char *text, uint64_t *out) {
    static const unit units[] = {
        {"bit", 1}, {"bit/s", 1}, {"bps", 1},
        {"kbit", 1000}, {"kbit/s", 1000}, {"kbps", 1000},
        {"Mbit", 1000000}, {"Mbit/s", 1000000}, {"Mbps", 1000000},
        {"Gbit", 1000000000ull}, {"Gbit/s", 1000000000ull}, {"Gbps", 1000000000ull},
        {NULL, 0}};
    return parse_with_units(text, units, 0, out);
}

int sim_value_bytes(const char *text, uint64_t *out) {
    static const unit units[] = {{"B", 1}, {"KB", 1000}, {"KiB", 1024}, {"MB", 1000000},
                                 {"MiB", 1048576}, {"GB", 1000000000ull}, {"GiB", 1073741824ull},
                                 {NULL, 0}};
    return parse_with_units(text, units, 0, out);
}

int sim_value_ppb(const char *text, uint32_t *out) {
    decimal d;
    const char *end;
    while (isspace((unsigned char)*text)) text++;
    if (parse_decimal(text, &d, &end) != 0) return -1;
    while (isspace((unsigned char)*end)) end++;
    uint64_t divisor = 1;
    if (*end == '%') { divisor = 100; end++; }
    while (isspace((unsigned char)*end)) end++;
    if (*end != 0) return -1;
    uint64_t v;
    if (scale_decimal(&d, 1000000000ull, divisor, &v) != 0 || v > 1000000000ull) return -1;
    *out = (uint32_t)v;
    return 0;
}

int sim_value_u64(const char *text, uint64_t *out) {
    while (isspace((unsigned char)*text)) text++;
    if (*text == '-' || *text == '+' || *text == 0) return -1;
    char *end;
    unsigned long long v = strtoull(text, &end, 0);
    while (isspace((unsigned char)*end)) end++;
    if (*end != 0) return -1;
    if (v == ULLONG_MAX) return -1;
    *out = v;
    return 0;
}

int sim_value_per_s(const char *text, uint64_t *out_milli) {
    char buf[32];
    size_t n = strlen(text);
    if (n >= sizeof buf) return -1;
    memcpy(buf, text, n + 1);
    while (n > 0 && isspace((unsigned char)buf[n - 1])) buf[--n] = 0;
    if (n >= 2 && strcmp(buf + n - 2, "/s") == 0) buf[n - 2] = 0;
    decimal d;
    const char *end;
    const char *p = buf;
    while (isspace((unsigned char)*p)) p++;
    if (parse_decimal(p, &d, &end) != 0) return -1;
    while (isspace((unsigned char)*end)) end++;
    if (*end != 0) return -1;
    return scale_decimal(&d, 1000, 1, out_milli);
}

int sim_value_bool(const char *text, int *out) {
    static const char *yes[] = {"yes", "on", "1", "true"};
    static const char *no[] = {"no", "off", "0", "false"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(text, yes[i]) == 0) { *out = 1; return 0; }
        if (strcasecmp(text, no[i]) == 0) { *out = 0; return 0; }
    }
    return -1;
}

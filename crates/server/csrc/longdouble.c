/*
 * Number helpers for volley's engine::numeric module.
 *
 * Redis 7.0 does its float work with the C library (strtod, strtold,
 * snprintf "%.17g" / "%.17Lf") and 80-bit long double arithmetic. Rust has
 * no long double, and matching glibc's decimal conversions byte for byte by
 * hand is a large job, so these few routines are done here in C, against
 * the same glibc Redis uses on Debian. All inputs are (pointer, length)
 * pairs: RESP strings are binary and need not be NUL-terminated.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Redis's MAX_LONG_DOUBLE_CHARS: long double text this long or longer is
 * rejected outright, and it bounds the formatted output too. */
#define VOLLEY_LD_MAX_CHARS 5120

/* Result codes shared with numeric.rs. */
#define VOLLEY_ERR_NOT_FLOAT (-1)
#define VOLLEY_ERR_NAN_OR_INF (-2)
#define VOLLEY_ERR_NO_ROOM (-3)

/*
 * Parses a double the way Redis's getDoubleFromObject does: strtod must
 * consume the whole string (so embedded NULs and trailing spaces fail), the
 * first byte must not be whitespace (strtod would skip it), NaN is refused,
 * and ERANGE counts only when the result overflowed to +-inf or underflowed
 * to zero -- subnormal results are kept. There is no length limit.
 * Returns 1 and stores the value on success, 0 otherwise.
 */
int volley_parse_double(const char *s, size_t len, double *out) {
    char stackbuf[128];
    char *buf = stackbuf;
    char *end;
    double v;
    int ok;

    if (len == 0) return 0;
    if (len >= sizeof(stackbuf)) {
        buf = malloc(len + 1);
        if (buf == NULL) return 0;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';

    ok = 0;
    if (!isspace((unsigned char)buf[0])) {
        errno = 0;
        v = strtod(buf, &end);
        ok = (size_t)(end - buf) == len && !isnan(v) &&
             !(errno == ERANGE && (isinf(v) || v == 0.0));
        if (ok) *out = v;
    }
    if (buf != stackbuf) free(buf);
    return ok;
}

/* Writes v with "%.17g" (Redis 7.0's double reply format). Returns the
 * snprintf length; 32 bytes always suffice ("-1.2345678901234567e-308").
 * numeric.rs formats doubles in Rust (3x faster) and uses this only as the
 * reference its tests compare against. */
int volley_fmt_g17(double v, char *out, size_t outlen) {
    return snprintf(out, outlen, "%.17g", v);
}

/* Redis's string2ld rules: like volley_parse_double but with strtold and
 * the MAX_LONG_DOUBLE_CHARS length cap. Infinity text ("inf") is valid. */
static int parse_ld(const char *s, size_t len, long double *out) {
    char buf[VOLLEY_LD_MAX_CHARS];
    char *end;
    long double v;

    if (len == 0 || len >= sizeof(buf)) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (isspace((unsigned char)buf[0])) return 0;

    errno = 0;
    v = strtold(buf, &end);
    if ((size_t)(end - buf) != len || isnan(v)) return 0;
    if (errno == ERANGE && (isinf(v) || v == 0.0L)) return 0;
    *out = v;
    return 1;
}

/* 0: not a valid long double, 1: finite, 2: infinite. HINCRBYFLOAT needs
 * the distinction to reject an infinite increment before the addition. */
int volley_ld_classify(const char *s, size_t len) {
    long double v;
    if (!parse_ld(s, len, &v)) return 0;
    return isinf(v) ? 2 : 1;
}

/*
 * INCRBYFLOAT core: cur + incr in long double, formatted like Redis's
 * ld2string "human" mode: "%.17Lf", then trailing zeros and a bare trailing
 * '.' trimmed, and "-0" turned into "0". Returns the output length, or one
 * of the VOLLEY_ERR_* codes. The current value is parsed first, as Redis
 * does; both parse failures give the same error.
 */
int volley_ld_incr(const char *cur, size_t cur_len, const char *incr,
                   size_t incr_len, char *out, size_t outlen) {
    long double a, b, sum;
    int n;

    if (!parse_ld(cur, cur_len, &a) || !parse_ld(incr, incr_len, &b))
        return VOLLEY_ERR_NOT_FLOAT;
    sum = a + b;
    if (isnan(sum) || isinf(sum)) return VOLLEY_ERR_NAN_OR_INF;

    n = snprintf(out, outlen, "%.17Lf", sum);
    if (n < 0 || (size_t)n + 1 > outlen) return VOLLEY_ERR_NO_ROOM;
    if (memchr(out, '.', (size_t)n) != NULL) {
        while (out[n - 1] == '0') n--;
        if (out[n - 1] == '.') n--;
    }
    if (n == 2 && out[0] == '-' && out[1] == '0') {
        out[0] = '0';
        n = 1;
    }
    return n;
}

/*
 * raw_http.h: where an HTTP/1.1 response ends, for the raw C loops that keep a connection
 * (bench/raw_c.c http-keepalive, bench/raw_tls.c). Included, not compiled alone.
 *
 * A response ends after its head and either Content-Length bytes of body or the last chunk of
 * a chunked body (chunk sizes walked byte by byte, trailers skipped), as a client that reuses
 * the connection must find it; anything else (no length, a 1xx head) counts as a failure,
 * since a raw loop has no fallback. The head is kept in the caller's buffer up to its end;
 * body bytes are only counted, never stored.
 */
#ifndef RAW_HTTP_H
#define RAW_HTTP_H

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { RH_HEAD, RH_LENGTH, RH_CHUNK_SIZE, RH_CHUNK_EXT, RH_CHUNK_DATA, RH_CHUNK_CR, RH_CHUNK_LF,
       RH_TRAILER, RH_TRAILER_LINE, RH_DONE, RH_BAD };

struct raw_http {
    int state;
    int status;      /* the status code once the head is read */
    long left;       /* body bytes left (RH_LENGTH) or of the current chunk (RH_CHUNK_DATA) */
    int line_empty;  /* RH_TRAILER*: the trailer line so far is empty */
};

static inline void raw_http_reset(struct raw_http *h) {
    h->state = RH_HEAD;
    h->status = 0;
    h->left = 0;
    h->line_empty = 1;
}

/* Walks body bytes: returns the number consumed (all of them unless the response ended). */
static inline size_t raw_http_body(struct raw_http *h, const char *p, size_t n) {
    size_t i = 0;
    while (i < n && h->state != RH_DONE && h->state != RH_BAD) {
        char ch = p[i];
        switch (h->state) {
        case RH_LENGTH: {
            size_t take = (size_t)h->left < n - i ? (size_t)h->left : n - i;
            h->left -= take;
            i += take;
            if (h->left == 0) h->state = RH_DONE;
            continue;
        }
        case RH_CHUNK_SIZE:
            if (ch >= '0' && ch <= '9') h->left = h->left * 16 + (ch - '0');
            else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f') h->left = h->left * 16 + ((ch | 0x20) - 'a' + 10);
            else if (ch == '\n') h->state = h->left ? RH_CHUNK_DATA : RH_TRAILER;
            else h->state = RH_CHUNK_EXT; /* ';' extension or the '\r' */
            break;
        case RH_CHUNK_EXT:
            if (ch == '\n') h->state = h->left ? RH_CHUNK_DATA : RH_TRAILER;
            break;
        case RH_CHUNK_DATA: {
            size_t take = (size_t)h->left < n - i ? (size_t)h->left : n - i;
            h->left -= take;
            i += take;
            if (h->left == 0) h->state = RH_CHUNK_CR;
            continue;
        }
        case RH_CHUNK_CR:
            h->state = ch == '\r' ? RH_CHUNK_LF : ch == '\n' ? RH_CHUNK_SIZE : RH_BAD;
            break;
        case RH_CHUNK_LF:
            h->state = ch == '\n' ? RH_CHUNK_SIZE : RH_BAD;
            break;
        case RH_TRAILER: /* start of a trailer line: an empty one ends the response */
            h->line_empty = 1;
            h->state = RH_TRAILER_LINE;
            /* fall through */
        case RH_TRAILER_LINE:
            if (ch == '\n') {
                if (h->line_empty) h->state = RH_DONE;
                else h->state = RH_TRAILER;
            } else if (ch != '\r') {
                h->line_empty = 0;
            }
            break;
        }
        i++;
    }
    return i;
}

/*
 * Feeds what arrived: `buf` holds `*got` bytes of which the last `n` are new. While the head
 * is incomplete the bytes stay in `buf`; once it is complete the body bytes are walked and
 * `*got` is set to 0 (nothing more to keep). Returns the state (RH_DONE: the response ended,
 * RH_BAD: unusable, else more is needed).
 */
static inline int raw_http_feed(struct raw_http *h, char *buf, size_t *got, size_t cap, size_t n) {
    if (h->state == RH_HEAD) {
        char *end = memmem(buf, *got, "\r\n\r\n", 4);
        if (!end) {
            if (*got == cap) h->state = RH_BAD; /* a head larger than the buffer */
            return h->state;
        }
        size_t head = (size_t)(end + 4 - buf);
        if (head < 12 || strncmp(buf, "HTTP/1.", 7) != 0) return h->state = RH_BAD;
        h->status = atoi(buf + 9);
        /* The head's own search: a NUL after it (overwriting a body byte, already walked). */
        char saved = buf[head - 1];
        buf[head - 1] = 0;
        char *te = strcasestr(buf, "\r\ntransfer-encoding:");
        char *cl = strcasestr(buf, "\r\ncontent-length:");
        if (te && strcasestr(te, "chunked")) {
            h->state = RH_CHUNK_SIZE;
            h->left = 0;
        } else if (cl) {
            h->left = atol(cl + 17);
            h->state = h->left ? RH_LENGTH : RH_DONE;
        } else {
            h->state = RH_BAD; /* close-delimited: no use on a kept connection */
        }
        buf[head - 1] = saved;
        size_t body = *got - head;
        *got = 0;
        if (body) raw_http_body(h, buf + head, body);
        return h->state;
    }
    (void)cap;
    raw_http_body(h, buf + *got - n, n);
    *got = 0;
    return h->state;
}

#endif

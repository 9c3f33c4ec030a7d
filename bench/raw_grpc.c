/*
 * raw_grpc: the physical limit of ci/bench.sh's gRPC scenarios on this machine: a gRPC health
 * check (grpc.health.v1.Health/Check, service "") over h2c, its HTTP/2 frames written by hand.
 *
 *   raw_grpc grpc           HOST PORT N CONC [LABEL]   N checks, a connection per check
 *   raw_grpc grpc-keepalive HOST PORT N CONC [LABEL]   N checks over CONC kept connections,
 *                                                      one stream at a time on each
 *
 * bench/raw_c.c's loop (one thread, one edge-triggered epoll set). Per connection: socket,
 * setsockopt(SO_LINGER 0), setsockopt(TCP_NODELAY) (both as libprober's gRPC probe), connect,
 * epoll_ctl; then the exchange libprober's HTTP/2 client makes, in as few writes:
 *   write 1: the connection preface and our SETTINGS (ENABLE_PUSH 0);
 *   read:    the server's SETTINGS (and whatever else it sends first);
 *   write 2: SETTINGS ACK, HEADERS (a fixed literal HPACK block: :method POST and :scheme http
 *            from the static table, :path, :authority, content-type, user-agent, te, and
 *            grpc-timeout as literals without indexing, no Huffman) and DATA with END_STREAM
 *            (the 5-byte gRPC prefix and the empty HealthCheckRequest);
 *   read:    until the trailers (HEADERS with END_STREAM) of the stream, whose grpc-status
 *            must be 0, with :status 200 and the message SERVING (00 00000002 0801).
 * Received frames are handled as a client must: every header block goes through an HPACK
 * decoder with a dynamic table and Huffman decoding (grpc-go's server indexes its fields and
 * Huffman-codes names), a PING is answered, a later SETTINGS acknowledged (answers go out with
 * the next write), WINDOW_UPDATE opens the send window, RST_STREAM and GOAWAY fail the check.
 * One-shot: the connection is closed with RST once the trailers are in (an answer still pending
 * is not sent). Keep-alive: the next check is the next odd stream on the same connection,
 * written at once (HEADERS + DATA, with any pending answer, one write); received DATA is given
 * back with a connection WINDOW_UPDATE every 32 KiB.
 *
 * Prints one line: BENCH scenario=LABEL impl=raw_c n=... rate_per_s=... cpu_us_per_probe=...
 * (CPU = user + sys from getrusage(RUSAGE_SELF) around the loop, as raw_c).
 * Build: cc -O2 -o raw_grpc raw_grpc.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- HPACK (RFC 7541): the static table, Huffman codes and a decoder ---------------------- */

static const char *const static_table[61][2] = {
    { ":authority", "" },
    { ":method", "GET" },
    { ":method", "POST" },
    { ":path", "/" },
    { ":path", "/index.html" },
    { ":scheme", "http" },
    { ":scheme", "https" },
    { ":status", "200" },
    { ":status", "204" },
    { ":status", "206" },
    { ":status", "304" },
    { ":status", "400" },
    { ":status", "404" },
    { ":status", "500" },
    { "accept-charset", "" },
    { "accept-encoding", "gzip, deflate" },
    { "accept-language", "" },
    { "accept-ranges", "" },
    { "accept", "" },
    { "access-control-allow-origin", "" },
    { "age", "" },
    { "allow", "" },
    { "authorization", "" },
    { "cache-control", "" },
    { "content-disposition", "" },
    { "content-encoding", "" },
    { "content-language", "" },
    { "content-length", "" },
    { "content-location", "" },
    { "content-range", "" },
    { "content-type", "" },
    { "cookie", "" },
    { "date", "" },
    { "etag", "" },
    { "expect", "" },
    { "expires", "" },
    { "from", "" },
    { "host", "" },
    { "if-match", "" },
    { "if-modified-since", "" },
    { "if-none-match", "" },
    { "if-range", "" },
    { "if-unmodified-since", "" },
    { "last-modified", "" },
    { "link", "" },
    { "location", "" },
    { "max-forwards", "" },
    { "proxy-authenticate", "" },
    { "proxy-authorization", "" },
    { "range", "" },
    { "referer", "" },
    { "refresh", "" },
    { "retry-after", "" },
    { "server", "" },
    { "set-cookie", "" },
    { "strict-transport-security", "" },
    { "transfer-encoding", "" },
    { "user-agent", "" },
    { "vary", "" },
    { "via", "" },
    { "www-authenticate", "" },
};

static const uint32_t huff_code[256] = {
    0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7,
    0xfffffe8, 0xffffea, 0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb, 0xfffffec,
    0xfffffed, 0xfffffee, 0xfffffef, 0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3,
    0xffffff4, 0xffffff5, 0xffffff6, 0xffffff7, 0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb,
    0x14, 0x3f8, 0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa,
    0x3fa, 0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18,
    0x0, 0x1, 0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d,
    0x1e, 0x1f, 0x5c, 0xfb, 0x7ffc, 0x20, 0xffb, 0x3fc,
    0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62,
    0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a,
    0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72,
    0xfc, 0x73, 0xfd, 0x1ffb, 0x7fff0, 0x1ffc, 0x3ffc, 0x22,
    0x7ffd, 0x3, 0x23, 0x4, 0x24, 0x5, 0x25, 0x26,
    0x27, 0x6, 0x74, 0x75, 0x28, 0x29, 0x2a, 0x7,
    0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78,
    0x79, 0x7a, 0x7b, 0x7ffe, 0x7fc, 0x3ffd, 0x1ffd, 0xffffffc,
    0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4, 0x3fffd5, 0x7fffd9,
    0x3fffd6, 0x7fffda, 0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde, 0xffffeb, 0x7fffdf,
    0xffffec, 0xffffed, 0x3fffd7, 0x7fffe0, 0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3,
    0x7fffe4, 0x1fffdc, 0x3fffd8, 0x7fffe5, 0x3fffd9, 0x7fffe6, 0x7fffe7, 0xffffef,
    0x3fffda, 0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc, 0x7fffe8, 0x7fffe9, 0x1fffde,
    0x7fffea, 0x3fffdd, 0x3fffde, 0xfffff0, 0x1fffdf, 0x3fffdf, 0x7fffeb, 0x7fffec,
    0x1fffe0, 0x1fffe1, 0x3fffe0, 0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef,
    0xfffea, 0x3fffe2, 0x3fffe3, 0x3fffe4, 0x7ffff0, 0x3fffe5, 0x3fffe6, 0x7ffff1,
    0x3ffffe0, 0x3ffffe1, 0xfffeb, 0x7fff1, 0x3fffe7, 0x7ffff2, 0x3fffe8, 0x1ffffec,
    0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde, 0x7ffffdf, 0x3ffffe5, 0xfffff1, 0x1ffffed,
    0x7fff2, 0x1fffe3, 0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7, 0x7ffffe2, 0xfffff2,
    0x1fffe4, 0x1fffe5, 0x3ffffe8, 0x3ffffe9, 0xffffffd, 0x7ffffe3, 0x7ffffe4, 0x7ffffe5,
    0xfffec, 0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7, 0x1fffe8, 0x7ffff3,
    0x3fffea, 0x3fffeb, 0x1ffffee, 0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4,
    0x3ffffeb, 0x7ffffe6, 0x3ffffec, 0x3ffffed, 0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea,
    0x7ffffeb, 0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee, 0x7ffffef, 0x7fffff0, 0x3ffffee,
};
static const uint8_t huff_len[256] = {
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
    6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
    5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
    13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
    15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
    6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
};
/* Canonical code: per length, the first code and where its symbols start in huff_sym. */
static uint32_t huff_first[31];
static int huff_count[31], huff_start[31];
static uint8_t huff_sym[256];

static void huff_init(void) {
    int k = 0;
    for (int len = 5; len <= 30; len++) {
        huff_start[len] = k;
        huff_first[len] = UINT32_MAX;
        for (int s = 0; s < 256; s++) {
            if (huff_len[s] != len) continue;
            if (huff_first[len] == UINT32_MAX) huff_first[len] = huff_code[s];
            huff_sym[k++] = (uint8_t)s; /* codes of a length are consecutive, by symbol */
            huff_count[len]++;
        }
    }
}

/* Decodes n Huffman bytes into out (cap bytes); returns the length or -1. */
static int huff_decode(const uint8_t *p, size_t n, char *out, size_t cap) {
    uint32_t code = 0;
    int len = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        for (int b = 7; b >= 0; b--) {
            code = code << 1 | ((p[i] >> b) & 1);
            len++;
            if (len > 30) return -1;
            if (len >= 5 && huff_count[len] && code >= huff_first[len] &&
                code - huff_first[len] < (uint32_t)huff_count[len]) {
                if (o == cap) return -1;
                out[o++] = (char)huff_sym[huff_start[len] + code - huff_first[len]];
                code = 0;
                len = 0;
            }
        }
    }
    if (len > 7 || code != (1u << len) - 1) return -1; /* padding: at most 7 one bits */
    return (int)o;
}

struct entry { char *name, *value; size_t nlen, vlen; };

struct hpack {
    struct entry e[128]; /* newest at head; 4096 bytes / 32 of overhead per entry */
    int head, count;
    size_t size, max;
};

static void hp_evict_oldest(struct hpack *t) {
    struct entry *x = &t->e[(t->head + t->count - 1) % 128];
    t->size -= x->nlen + x->vlen + 32;
    free(x->name);
    free(x->value);
    t->count--;
}

static void hp_evict(struct hpack *t) {
    while (t->count && t->size > t->max) hp_evict_oldest(t);
}

static void hp_add(struct hpack *t, const char *n, size_t nl, const char *v, size_t vl) {
    size_t sz = nl + vl + 32;
    t->size += sz;
    hp_evict(t);
    if (sz > t->max) { t->size -= sz; return; } /* larger than the table: it empties it */
    if (t->count == 128) hp_evict_oldest(t); /* only with a table of empty fields */
    t->head = (t->head + 127) % 128;
    struct entry *x = &t->e[t->head];
    x->name = malloc(nl + 1);
    x->value = malloc(vl + 1);
    memcpy(x->name, n, nl);
    memcpy(x->value, v, vl);
    x->nlen = nl;
    x->vlen = vl;
    t->count++;
}

static int hp_get(struct hpack *t, uint32_t idx, const char **n, size_t *nl, const char **v, size_t *vl) {
    if (idx >= 1 && idx <= 61) {
        *n = static_table[idx - 1][0];
        *nl = strlen(*n);
        *v = static_table[idx - 1][1];
        *vl = strlen(*v);
        return 0;
    }
    if (idx < 62 || idx - 62 >= (uint32_t)t->count) return -1;
    struct entry *x = &t->e[(t->head + idx - 62) % 128];
    *n = x->name; *nl = x->nlen; *v = x->value; *vl = x->vlen;
    return 0;
}

static int hp_int(const uint8_t **p, const uint8_t *end, int prefix, uint32_t *out) {
    if (*p >= end) return -1;
    uint32_t max = (1u << prefix) - 1, v = **p & max;
    (*p)++;
    if (v < max) { *out = v; return 0; }
    for (int shift = 0; shift < 28; shift += 7) {
        if (*p >= end) return -1;
        uint8_t b = *(*p)++;
        v += (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) { *out = v; return 0; }
    }
    return -1;
}

static int hp_str(const uint8_t **p, const uint8_t *end, char *buf, size_t cap, const char **s, size_t *len) {
    if (*p >= end) return -1;
    int huff = **p & 0x80;
    uint32_t n;
    if (hp_int(p, end, 7, &n) < 0 || n > (size_t)(end - *p)) return -1;
    if (huff) {
        int r = huff_decode(*p, n, buf, cap);
        if (r < 0) return -1;
        *s = buf;
        *len = (size_t)r;
    } else {
        *s = (const char *)*p;
        *len = n;
    }
    *p += n;
    return 0;
}

/* The fields a check looks at, from one header block. */
struct fields { int status, grpc_status; };

static int is(const char *s, size_t n, const char *lit) { return n == strlen(lit) && memcmp(s, lit, n) == 0; }

static int hp_decode(struct hpack *t, const uint8_t *p, size_t n, struct fields *f) {
    const uint8_t *end = p + n;
    char nbuf[256], vbuf[256];
    while (p < end) {
        const char *name, *value;
        size_t nl, vl;
        uint32_t idx;
        uint8_t b = *p;
        if (b & 0x80) { /* indexed */
            if (hp_int(&p, end, 7, &idx) < 0 || hp_get(t, idx, &name, &nl, &value, &vl) < 0) return -1;
        } else if ((b & 0xe0) == 0x20) { /* dynamic table size update */
            if (hp_int(&p, end, 5, &idx) < 0 || idx > 4096) return -1;
            t->max = idx;
            hp_evict(t);
            continue;
        } else {
            int incr = (b & 0xc0) == 0x40;
            if (hp_int(&p, end, incr ? 6 : 4, &idx) < 0) return -1;
            if (idx) {
                const char *v0;
                size_t vl0;
                if (hp_get(t, idx, &name, &nl, &v0, &vl0) < 0) return -1;
            } else if (hp_str(&p, end, nbuf, sizeof nbuf, &name, &nl) < 0) {
                return -1;
            }
            if (hp_str(&p, end, vbuf, sizeof vbuf, &value, &vl) < 0) return -1;
            if (incr) {
                /* The name may point into the table, which adding can evict: looked at in a
                 * copy (the value is in vbuf or the block, which adding leaves alone). */
                if (nl > sizeof nbuf) return -1;
                if (name != nbuf) { memmove(nbuf, name, nl); name = nbuf; }
                hp_add(t, name, nl, value, vl);
            }
        }
        if (is(name, nl, ":status")) f->status = atoi(value); /* a digit run, then ends */
        else if (is(name, nl, "grpc-status")) f->grpc_status = vl > 0 && vl < 4 ? atoi(value) : -1;
    }
    return 0;
}

/* ---- HTTP/2 frames ------------------------------------------------------------------------- */

enum { F_DATA = 0, F_HEADERS = 1, F_RST = 3, F_SETTINGS = 4, F_PING = 6, F_GOAWAY = 7,
       F_WINDOW = 8, F_CONT = 9 };
enum { FL_END_STREAM = 1, FL_ACK = 1, FL_END_HEADERS = 4, FL_PADDED = 8, FL_PRIORITY = 0x20 };

static void put_frame(char *out, size_t *len, uint32_t flen, uint8_t type, uint8_t flags, uint32_t stream) {
    uint8_t *o = (uint8_t *)out + *len;
    o[0] = flen >> 16; o[1] = flen >> 8; o[2] = flen; o[3] = type; o[4] = flags;
    o[5] = stream >> 24; o[6] = stream >> 16; o[7] = stream >> 8; o[8] = stream;
    *len += 9;
}

static char block[512]; /* the request's HPACK block */
static size_t blocklen;

static void lit(const char *name, int name_idx, const char *value) {
    uint8_t *b = (uint8_t *)block + blocklen;
    size_t vl = strlen(value), k = 0;
    if (name_idx) { /* literal without indexing, indexed name (4-bit prefix) */
        if (name_idx < 15) b[k++] = (uint8_t)name_idx;
        else { b[k++] = 0x0f; b[k++] = (uint8_t)(name_idx - 15); }
    } else {
        size_t nl = strlen(name);
        b[k++] = 0;
        b[k++] = (uint8_t)nl;
        memcpy(b + k, name, nl);
        k += nl;
    }
    b[k++] = (uint8_t)vl;
    memcpy(b + k, value, vl);
    blocklen += k + vl;
}

/* Appends the check on `stream`: HEADERS (the block) and DATA with END_STREAM. */
static void put_request(char *out, size_t *len, uint32_t stream) {
    put_frame(out, len, (uint32_t)blocklen, F_HEADERS, FL_END_HEADERS, stream);
    memcpy(out + *len, block, blocklen);
    *len += blocklen;
    static const char msg[5] = { 0, 0, 0, 0, 0 }; /* uncompressed, length 0: service "" */
    put_frame(out, len, 5, F_DATA, FL_END_STREAM, stream);
    memcpy(out + *len, msg, 5);
    *len += 5;
}

/* ---- the loop -------------------------------------------------------------------------------- */

enum { CONNECTING, WAIT_SETTINGS, IN_STREAM };

struct conn {
    int fd;
    unsigned gen;
    int state;
    uint32_t stream;
    int64_t send_window;   /* the connection's, for our DATA */
    uint32_t recv_unacked; /* DATA received and not yet given back */
    struct fields head, trailers;
    int head_seen, done;
    size_t msglen;
    uint8_t msg[64];
    struct hpack hp;
    size_t inlen, outlen, blk_len;
    uint32_t blk_stream; int blk_end_stream; /* a header block continued by CONTINUATION */
    uint8_t in[16384 + 9];
    char out[2048];
    uint8_t blk[4096];
};

static struct sockaddr_storage addr;
static socklen_t addrlen;
static int ep, keepalive;
static unsigned long ok_count, fail_count, started, n_total;
static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
static const char *why_failed;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void reset_stream(struct conn *c) {
    memset(&c->head, 0, sizeof c->head);
    c->trailers.status = 0;
    c->trailers.grpc_status = -1;
    c->head_seen = c->done = 0;
    c->msglen = 0;
}

static int start(struct conn *c, unsigned idx) {
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct linger lg = { 1, 0 };
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&addr, addrlen) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    c->fd = fd;
    c->gen++;
    c->state = CONNECTING;
    c->stream = 1;
    c->send_window = 65535;
    c->recv_unacked = 0;
    c->inlen = c->outlen = c->blk_len = 0;
    for (int i = 0; i < c->hp.count; i++) {
        struct entry *x = &c->hp.e[(c->hp.head + i) % 128];
        free(x->name);
        free(x->value);
    }
    memset(&c->hp, 0, sizeof c->hp);
    c->hp.max = 4096;
    reset_stream(c);
    struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN | EPOLLRDHUP | EPOLLET,
                              .data.u64 = (uint64_t)c->gen << 32 | idx };
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
        close(fd);
        return -1;
    }
    return 0;
}

static int flush(struct conn *c) {
    if (!c->outlen) return 0;
    ssize_t w = write(c->fd, c->out, c->outlen);
    if (w != (ssize_t)c->outlen) { why_failed = "short write"; return -1; }
    c->outlen = 0;
    return 0;
}

static int send_request(struct conn *c) {
    if (c->send_window < 5) { why_failed = "send window exhausted"; return -1; }
    c->send_window -= 5;
    reset_stream(c);
    put_request(c->out, &c->outlen, c->stream);
    return 0;
}

static int header_block(struct conn *c, uint32_t stream, int end_stream, const uint8_t *p, size_t n) {
    struct fields f = { 0, -1 };
    if (hp_decode(&c->hp, p, n, &f) < 0) { why_failed = "hpack"; return -1; }
    if (stream != c->stream || c->state != IN_STREAM) return 0; /* kept in step, not ours */
    if (!c->head_seen && !end_stream) { c->head = f; c->head_seen = 1; return 0; }
    if (!c->head_seen) c->head = f; /* trailers-only */
    c->trailers = f;
    c->done = 1;
    return 0;
}

/* Handles complete frames in c->in; -1 on a failure of the connection. */
static int frames(struct conn *c) {
    size_t off = 0;
    while (c->inlen - off >= 9) {
        uint8_t *h = c->in + off;
        uint32_t len = (uint32_t)h[0] << 16 | h[1] << 8 | h[2];
        uint8_t type = h[3], flags = h[4];
        uint32_t stream = ((uint32_t)h[5] << 24 | h[6] << 16 | h[7] << 8 | h[8]) & 0x7fffffff;
        if (len > 16384) { why_failed = "frame too large"; return -1; }
        if (c->inlen - off < 9 + len) break;
        uint8_t *p = h + 9;
        off += 9 + len;
        if (c->blk_len && type != F_CONT) { why_failed = "CONTINUATION expected"; return -1; }
        switch (type) {
        case F_SETTINGS:
            if (flags & FL_ACK) break;
            put_frame(c->out, &c->outlen, 0, F_SETTINGS, FL_ACK, 0);
            if (c->state == WAIT_SETTINGS) {
                c->state = IN_STREAM;
                if (send_request(c) < 0) return -1;
            }
            break;
        case F_PING:
            if (flags & FL_ACK || len != 8) break;
            put_frame(c->out, &c->outlen, 8, F_PING, FL_ACK, 0);
            memcpy(c->out + c->outlen, p, 8);
            c->outlen += 8;
            break;
        case F_WINDOW:
            if (stream == 0 && len == 4)
                c->send_window += ((uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]) & 0x7fffffff;
            break;
        case F_DATA: {
            size_t pad = 0;
            if (flags & FL_PADDED) { pad = 1 + p[0]; p++; if (pad > len) return -1; }
            size_t body = len - pad;
            c->recv_unacked += len;
            if (stream == c->stream) {
                if (c->msglen + body > sizeof c->msg) { why_failed = "message too large"; return -1; }
                memcpy(c->msg + c->msglen, p, body);
                c->msglen += body;
                if (flags & FL_END_STREAM) c->done = 1; /* no trailers: fails below */
            }
            break;
        }
        case F_HEADERS: {
            size_t skip = 0, pad = 0;
            if (flags & FL_PADDED) { pad = p[0]; skip = 1; }
            if (flags & FL_PRIORITY) skip += 5;
            if (skip + pad > len) return -1;
            if (flags & FL_END_HEADERS) {
                if (header_block(c, stream, flags & FL_END_STREAM, p + skip, len - skip - pad) < 0) return -1;
            } else {
                if (len - skip - pad > sizeof c->blk) return -1;
                memcpy(c->blk, p + skip, len - skip - pad);
                c->blk_len = len - skip - pad;
                c->blk_stream = stream;
                c->blk_end_stream = flags & FL_END_STREAM;
            }
            break;
        }
        case F_CONT:
            if (!c->blk_len || stream != c->blk_stream || c->blk_len + len > sizeof c->blk) return -1;
            memcpy(c->blk + c->blk_len, p, len);
            c->blk_len += len;
            if (flags & FL_END_HEADERS) {
                size_t n = c->blk_len;
                c->blk_len = 0;
                if (header_block(c, stream, c->blk_end_stream, c->blk, n) < 0) return -1;
            }
            break;
        case F_RST:
            if (stream == c->stream) { why_failed = "RST_STREAM"; return -1; }
            break;
        case F_GOAWAY:
            why_failed = "GOAWAY";
            return -1;
        default:
            break;
        }
    }
    memmove(c->in, c->in + off, c->inlen - off);
    c->inlen -= off;
    return 0;
}

static void drop(struct conn *c) {
    close(c->fd); /* RST (SO_LINGER 0) */
    c->fd = -1;
}

static unsigned long on_event(struct conn *c, uint32_t events, int *closed) {
    unsigned long finished = 0;
    *closed = 0;
    if (c->state == CONNECTING) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return 0;
        memcpy(c->out, preface, 24);
        c->outlen = 24;
        put_frame(c->out, &c->outlen, 6, F_SETTINGS, 0, 0);
        static const uint8_t push_off[6] = { 0, 2, 0, 0, 0, 0 }; /* SETTINGS_ENABLE_PUSH 0 */
        memcpy(c->out + c->outlen, push_off, 6);
        c->outlen += 6;
        if (flush(c) < 0) goto fail;
        c->state = WAIT_SETTINGS;
    }
    for (;;) {
        ssize_t r = read(c->fd, c->in + c->inlen, sizeof c->in - c->inlen);
        if (r < 0 && errno == EAGAIN) break;
        if (r <= 0) { why_failed = r ? "read" : "EOF"; goto fail; }
        c->inlen += r;
        if (frames(c) < 0) goto fail;
        if (!c->done) continue;
        /* The check is complete. */
        int good = c->head.status == 200 && c->trailers.grpc_status == 0 && c->msglen == 7 &&
                   memcmp(c->msg, "\0\0\0\0\2\x08\x01", 7) == 0;
        if (good) ok_count++;
        else { fail_count++; if (!why_failed) why_failed = "not SERVING"; }
        finished++;
        if (!keepalive || started >= n_total) {
            drop(c);
            *closed = 1;
            return finished;
        }
        started++;
        c->stream += 2;
        if (c->recv_unacked >= 32768) { /* give the received DATA back to the server */
            uint32_t inc = c->recv_unacked;
            put_frame(c->out, &c->outlen, 4, F_WINDOW, 0, 0);
            uint8_t *o = (uint8_t *)c->out + c->outlen;
            o[0] = inc >> 24; o[1] = inc >> 16; o[2] = inc >> 8; o[3] = inc;
            c->outlen += 4;
            c->recv_unacked = 0;
        }
        if (send_request(c) < 0) goto fail;
        if (flush(c) < 0) goto fail;
    }
    if (flush(c) < 0) goto fail; /* answers (SETTINGS ACK + the request, PING ACK) */
    return finished;
fail:
    drop(c);
    fail_count++;
    *closed = 1;
    return finished + 1;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: raw_grpc {grpc|grpc-keepalive} HOST PORT N CONC [LABEL]\n");
        return 64;
    }
    keepalive = strcmp(argv[1], "grpc-keepalive") == 0;
    if (!keepalive && strcmp(argv[1], "grpc") != 0) {
        fprintf(stderr, "raw_grpc: unknown mode %s\n", argv[1]);
        return 64;
    }
    const char *host = argv[2];
    int port = atoi(argv[3]);
    unsigned long n = strtoul(argv[4], 0, 10);
    unsigned conc = (unsigned)atoi(argv[5]);
    const char *label = argc > 6 ? argv[6] : keepalive ? "grpc_keepalive" : "grpc_oneshot";

    struct sockaddr_in *a4 = (struct sockaddr_in *)&addr;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&addr;
    memset(&addr, 0, sizeof addr);
    char authority[128];
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(port);
        addrlen = sizeof *a4;
        snprintf(authority, sizeof authority, "%s:%d", host, port);
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        addrlen = sizeof *a6;
        snprintf(authority, sizeof authority, "[%s]:%d", host, port);
    } else {
        fprintf(stderr, "raw_grpc: %s is not an IP address\n", host);
        return 64;
    }
    huff_init();
    block[blocklen++] = (char)0x83; /* :method POST */
    block[blocklen++] = (char)0x86; /* :scheme http */
    lit(":path", 4, "/grpc.health.v1.Health/Check");
    lit(":authority", 1, authority);
    lit("content-type", 31, "application/grpc");
    lit("user-agent", 58, "kube-probe/1.37");
    lit("te", 0, "trailers");
    lit("grpc-timeout", 0, "1000m"); /* libprober's, for its default 1 s timeout */

    ep = epoll_create1(EPOLL_CLOEXEC);
    struct conn *conns = calloc(conc, sizeof *conns);
    struct epoll_event *evs = calloc(conc, sizeof *evs);
    if (ep < 0 || !conns || !evs) { perror("raw_grpc"); return 1; }
    for (unsigned i = 0; i < conc; i++) conns[i].fd = -1;
    n_total = n;

    struct rusage r0, r1;
    double t0 = now_s();
    getrusage(RUSAGE_SELF, &r0);
    unsigned long done = 0;
    for (unsigned i = 0; i < conc && started < n; i++) {
        started++;
        if (start(&conns[i], i) < 0) { fail_count++; done++; conns[i].fd = -1; }
    }
    while (done < n) {
        int k = epoll_wait(ep, evs, (int)conc, 1000);
        if (k < 0 && errno != EINTR) { perror("epoll_wait"); return 1; }
        for (int j = 0; j < k; j++) {
            unsigned idx = (unsigned)evs[j].data.u64;
            struct conn *c = &conns[idx];
            if (c->fd < 0 || (unsigned)(evs[j].data.u64 >> 32) != c->gen) continue; /* stale */
            int closed;
            done += on_event(c, evs[j].events, &closed);
            if (!closed) continue;
            while (started < n) {
                started++;
                if (start(c, idx) == 0) break;
                fail_count++;
                done++;
            }
        }
        if (k == 0) fprintf(stderr, "raw_grpc: no progress for 1 s\n");
    }
    getrusage(RUSAGE_SELF, &r1);
    double wall = now_s() - t0;
    double user = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1e6 + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec);
    double sys = (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e6 + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
    if (fail_count) fprintf(stderr, "raw_grpc: %lu of %lu checks failed; first: %s\n", fail_count, n, why_failed ? why_failed : "?");
    printf("BENCH scenario=%s impl=raw_c n=%lu ok=%lu fail=%lu wall_s=%.3f rate_per_s=%.1f "
           "cpu_us_per_probe=%.2f user_us_per_probe=%.2f sys_us_per_probe=%.2f cpu_pct=%.1f rss_kb=%ld conc=%u\n",
           label, n, ok_count, fail_count, wall, n / wall, (user + sys) / n, user / n, sys / n,
           (user + sys) / 1e4 / wall, r1.ru_maxrss, conc);
    return 0;
}

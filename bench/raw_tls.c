/*
 * raw_tls: the physical limit of ci/bench.sh's HTTPS scenarios on this machine, with OpenSSL.
 *
 *   raw_tls https           HOST PORT N CONC PATH [LABEL]   N GETs, a connection and a full
 *                                                           handshake per probe (impl=raw_c)
 *   raw_tls https-keepalive HOST PORT N CONC PATH [LABEL]   N GETs over CONC kept connections
 *
 * bench/raw_c.c's loop (one thread, one edge-triggered epoll set) with OpenSSL between the
 * socket and the HTTP exchange: socket, setsockopt(SO_LINGER 0), setsockopt(TCP_NODELAY) (what
 * libprober sets on HTTPS connections: without it the request waits behind the handshake's last
 * flight for the server's delayed ACK), connect, epoll_ctl, then SSL_connect until done, one
 * SSL_write of the request, SSL_read until the response ends (Content-Length or last chunk,
 * bench/raw_http.h), and for one-shot a close with RST and no close_notify, as libprober
 * closes. Keep-alive: the next request on the same connection (the request without
 * Connection: close, as libprober's keep-alive request).
 *
 * TLS as libprober's (rustls, ring provider) negotiates it with the bench's nginx: the same
 * server certificate, and the client offers only the suite and group rustls ends up with there,
 * so that both make the same handshake: ECDHE-ECDSA-AES256-GCM-SHA384 for TLS 1.2 (nginx
 * 1.22's default protocols stop at 1.2), TLS_AES_256_GCM_SHA384 for 1.3 (rustls's first
 * choice), key exchange X25519. No certificate verification (the kubelet's
 * InsecureSkipVerify; libprober's bench probes verify nothing either), but the server's
 * handshake signature is checked, as by rustls. No session resumption (no tickets, no cache).
 * RAW_TLS_CIPHERS, RAW_TLS_SUITES and RAW_TLS_GROUPS override the three lists. read_ahead is
 * on, so a record arrives in one read. The line ends with tls_version=, tls_cipher= and
 * tls_group= as negotiated on the first connection.
 *
 * Prints one line: BENCH scenario=LABEL impl=raw_c n=... rate_per_s=... cpu_us_per_probe=...
 * (CPU = user + sys from getrusage(RUSAGE_SELF) around the loop, as raw_c).
 * Build: cc -O2 -o raw_tls raw_tls.c -lssl -lcrypto
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "raw_http.h"

enum { CONNECTING, HANDSHAKE, SENDING, READING };

struct conn {
    int fd;
    unsigned gen;
    int state;
    SSL *ssl;
    size_t got;
    struct raw_http resp;
    char buf[16384];
};

static struct sockaddr_storage addr;
static socklen_t addrlen;
static char request[512];
static size_t reqlen;
static int ep, keepalive;
static SSL_CTX *ctx;
static unsigned long ok_count, fail_count, started, n_total;
static char negotiated[160];

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
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
    c->got = 0;
    struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN | EPOLLRDHUP | EPOLLET,
                              .data.u64 = (uint64_t)c->gen << 32 | idx };
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
        close(fd);
        return -1;
    }
    c->ssl = SSL_new(ctx);
    if (!c->ssl || !SSL_set_fd(c->ssl, fd)) {
        close(fd);
        return -1;
    }
    SSL_set_connect_state(c->ssl);
    return 0;
}

static void drop(struct conn *c) {
    SSL_free(c->ssl); /* no SSL_shutdown: no close_notify, as libprober's RST close */
    c->ssl = NULL;
    close(c->fd);
    c->fd = -1;
}

/* 1: go on; 0: wait for the socket; -1: failed. */
static int ssl_wait(struct conn *c, int r) {
    int e = SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return 0;
    static int told;
    if (!told++) { /* the first failure says why, once */
        fprintf(stderr, "raw_tls: SSL error %d (errno %d, state %d): ", e, errno, c->state);
        ERR_print_errors_fp(stderr);
        fputc('\n', stderr);
    }
    return -1;
}

/* Drives a connection; returns the probes finished, *closed when it was closed. */
static unsigned long on_event(struct conn *c, uint32_t events, int *closed) {
    unsigned long finished = 0;
    int r;
    *closed = 0;
    if (c->state == CONNECTING) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return 0;
        c->state = HANDSHAKE;
    }
    for (;;) {
        switch (c->state) {
        case HANDSHAKE:
            r = SSL_do_handshake(c->ssl);
            if (r != 1) {
                if ((r = ssl_wait(c, r)) == 0) return finished;
                goto fail;
            }
            if (!negotiated[0]) {
                char group[32] = "?";
                int nid = SSL_get_negotiated_group(c->ssl);
                if (nid > 0) snprintf(group, sizeof group, "%s", OBJ_nid2sn(nid & ~TLSEXT_nid_unknown));
                snprintf(negotiated, sizeof negotiated, "tls_version=%s tls_cipher=%s tls_group=%s",
                         SSL_get_version(c->ssl), SSL_get_cipher_name(c->ssl), group);
            }
            c->state = SENDING;
            break;
        case SENDING:
            r = SSL_write(c->ssl, request, (int)reqlen);
            if (r <= 0) {
                if ((r = ssl_wait(c, r)) == 0) return finished;
                goto fail;
            }
            raw_http_reset(&c->resp);
            c->got = 0;
            c->state = READING;
            break;
        case READING: {
            r = SSL_read(c->ssl, c->buf + c->got, (int)(sizeof c->buf - c->got));
            if (r <= 0) {
                if ((r = ssl_wait(c, r)) == 0) return finished;
                goto fail;
            }
            c->got += r;
            int st = raw_http_feed(&c->resp, c->buf, &c->got, sizeof c->buf, (size_t)r);
            if (st == RH_BAD) goto fail;
            if (st != RH_DONE) break;
            if (c->resp.status >= 200 && c->resp.status < 300) ok_count++; else fail_count++;
            finished++;
            if (!keepalive || started >= n_total) {
                drop(c);
                *closed = 1;
                return finished;
            }
            started++;
            c->state = SENDING;
            break;
        }
        }
    }
fail:
    ERR_clear_error();
    drop(c);
    fail_count++;
    *closed = 1;
    return finished + 1;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: raw_tls {https|https-keepalive} HOST PORT N CONC PATH [LABEL]\n");
        return 64;
    }
    keepalive = strcmp(argv[1], "https-keepalive") == 0;
    if (!keepalive && strcmp(argv[1], "https") != 0) {
        fprintf(stderr, "raw_tls: unknown mode %s\n", argv[1]);
        return 64;
    }
    const char *host = argv[2];
    int port = atoi(argv[3]);
    unsigned long n = strtoul(argv[4], 0, 10);
    unsigned conc = (unsigned)atoi(argv[5]);
    const char *path = argv[6];
    const char *label = argc > 7 ? argv[7] : keepalive ? "https_keepalive" : "https_oneshot";

    struct sockaddr_in *a4 = (struct sockaddr_in *)&addr;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&addr;
    memset(&addr, 0, sizeof addr);
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(port);
        addrlen = sizeof *a4;
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        addrlen = sizeof *a6;
    } else {
        fprintf(stderr, "raw_tls: %s is not an IP address\n", host);
        return 64;
    }
    const char *conn_hdr = keepalive ? "" : "Connection: close\r\n";
    reqlen = snprintf(request, sizeof request,
        strchr(host, ':') ? "GET %s HTTP/1.1\r\nHost: [%s]:%d\r\nUser-Agent: kube-probe/1.37\r\nAccept: */*\r\n%s\r\n"
                          : "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: kube-probe/1.37\r\nAccept: */*\r\n%s\r\n",
        path, host, port, conn_hdr);

    const char *ciphers = getenv("RAW_TLS_CIPHERS") ? getenv("RAW_TLS_CIPHERS") : "ECDHE-ECDSA-AES256-GCM-SHA384";
    const char *suites = getenv("RAW_TLS_SUITES") ? getenv("RAW_TLS_SUITES") : "TLS_AES_256_GCM_SHA384";
    const char *groups = getenv("RAW_TLS_GROUPS") ? getenv("RAW_TLS_GROUPS") : "X25519:P-256:P-384";
    ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
        !SSL_CTX_set_cipher_list(ctx, ciphers) || !SSL_CTX_set_ciphersuites(ctx, suites) ||
        !SSL_CTX_set1_groups_list(ctx, groups)) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_read_ahead(ctx, 1);

    ep = epoll_create1(EPOLL_CLOEXEC);
    struct conn *conns = calloc(conc, sizeof *conns);
    struct epoll_event *evs = calloc(conc, sizeof *evs);
    if (ep < 0 || !conns || !evs) { perror("raw_tls"); return 1; }
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
        if (k == 0) fprintf(stderr, "raw_tls: no progress for 1 s\n");
    }
    getrusage(RUSAGE_SELF, &r1);
    double wall = now_s() - t0;
    double user = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1e6 + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec);
    double sys = (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e6 + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
    printf("BENCH scenario=%s impl=raw_c n=%lu ok=%lu fail=%lu wall_s=%.3f rate_per_s=%.1f "
           "cpu_us_per_probe=%.2f user_us_per_probe=%.2f sys_us_per_probe=%.2f cpu_pct=%.1f rss_kb=%ld conc=%u %s\n",
           label, n, ok_count, fail_count, wall, n / wall, (user + sys) / n, user / n, sys / n,
           (user + sys) / 1e4 / wall, r1.ru_maxrss, conc, negotiated[0] ? negotiated : "tls_version=none");
    return 0;
}

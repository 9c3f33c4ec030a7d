/*
 * raw_c: the physical limit of ci/bench.sh's one-shot network scenarios on this machine.
 *
 *   raw_c tcp  HOST PORT N CONC [LABEL]        N TCP connects, CONC in flight
 *   raw_c http HOST PORT N CONC PATH [LABEL]   N HTTP/1.1 GETs, CONC in flight
 *   raw_c tcp-reuse ... / raw_c http-reuse ...  the same, reusing sockets (impl=raw_c_reuse)
 *   raw_c http-keepalive HOST PORT N CONC PATH [LABEL]
 *                                              N GETs over CONC kept connections (impl=raw_c)
 *
 * One thread, one epoll instance (edge-triggered), the fewest syscalls that do the job:
 *   tcp:  socket, setsockopt(SO_LINGER 0), connect, epoll_ctl(ADD), getsockopt(SO_ERROR), close
 *   http: socket, setsockopt(SO_LINGER 0), connect, epoll_ctl(ADD), write, read..., close
 * plus one epoll_wait per batch of ready sockets. Closing with SO_LINGER 0 (RST) is what
 * libprober does by default: no TIME_WAIT. The HTTP request carries the same headers as
 * libprober's (Host, User-Agent: kube-probe/1.37, Accept: star/star, Connection: close); the
 * response is read until its Content-Length is complete (at most 10 KiB kept) or EOF.
 *
 * The -reuse modes do what libprober's engine does with its socket pool: a connection that
 * succeeded ends with connect(AF_UNSPEC) (the kernel's tcp_disconnect: the same RST, the local
 * port released) and the socket, still in the epoll set, serves the next connection:
 *   connect, epoll_ctl(MOD), getsockopt(SO_ERROR) or write + read..., connect(AF_UNSPEC)
 * The epoll data carries a generation per connection slot so that the disconnect's own event,
 * delivered after the slot moved on, is recognised as stale.
 *
 * http-keepalive is the limit of a kept connection (ci/bench.sh http_keepalive): CONC
 * connections made once (as above), then per probe one write of the request (libprober's
 * keep-alive request: the same headers without Connection: close) and reads until the response
 * ends by its Content-Length or its last chunk (bench/raw_http.h), on the same connection.
 *
 * Prints one line: BENCH scenario=LABEL impl=raw_c n=... rate_per_s=... cpu_us_per_probe=...
 * with CPU = user + sys from getrusage(RUSAGE_SELF) around the loop, rss_kb = ru_maxrss.
 * Build: cc -O2 -o raw_c raw_c.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "raw_http.h"

enum { CONNECTING, READING };

struct conn {
    int fd;
    unsigned gen;       /* bumped per connection: stale epoll events carry an older one */
    int state;
    size_t got;         /* bytes in buf */
    long need;          /* total bytes expected (head + Content-Length), -1 unknown */
    struct raw_http resp; /* http-keepalive: where the response ends */
    char buf[16384];
};

static struct sockaddr_storage addr;
static socklen_t addrlen;
static int http;
static char request[512];
static size_t reqlen;
static int ep;
static unsigned long ok_count, fail_count;
static int reuse;
static int keepalive;
static unsigned long started_count, n_total; /* http-keepalive starts probes on kept connections */
static int *pool;       /* disconnected sockets, still in the epoll set */
static unsigned npool;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int start(struct conn *c, unsigned idx) {
    int fd, fresh = !(reuse && npool > 0);
    if (fresh) {
        fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) return -1;
        struct linger lg = { 1, 0 };
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    } else {
        fd = pool[--npool];
    }
    if (connect(fd, (struct sockaddr *)&addr, addrlen) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    c->fd = fd;
    c->gen++;
    c->state = CONNECTING;
    c->got = 0;
    c->need = -1;
    struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN | EPOLLRDHUP | EPOLLET,
                              .data.u64 = (uint64_t)c->gen << 32 | idx };
    if (epoll_ctl(ep, fresh ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev) < 0) {
        close(fd);
        return -1;
    }
    return 0;
}

/* Returns 1 when the connection is finished (closed), 0 while it goes on. */
static int finish(struct conn *c, int ok) {
    struct sockaddr unspec = { .sa_family = AF_UNSPEC };
    if (reuse && ok && connect(c->fd, &unspec, sizeof unspec) == 0)
        pool[npool++] = c->fd; /* RST sent, port released; kept for the next connection */
    else
        close(c->fd); /* RST (SO_LINGER 0); close also removes it from the epoll set */
    c->fd = -1;
    if (ok) ok_count++; else fail_count++;
    return 1;
}

static int http_status_ok(const char *buf, size_t len) {
    if (len < 12 || strncmp(buf, "HTTP/1.", 7) != 0) return 0;
    int code = atoi(buf + 9);
    return code >= 200 && code < 300;
}

static int on_event(struct conn *c, uint32_t events) {
    if (c->state == CONNECTING) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return 0;
        if (!http) {
            int err = 0;
            socklen_t len = sizeof err;
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
            return finish(c, err == 0);
        }
        ssize_t w = write(c->fd, request, reqlen);
        if (w != (ssize_t)reqlen) return finish(c, 0);
        c->state = READING;
        /* fall through: the response may be there already */
    }
    for (;;) {
        size_t room = sizeof c->buf - c->got;
        if (room == 0) { /* keep the head, drop body bytes beyond the buffer */
            c->got = sizeof c->buf / 2;
            room = sizeof c->buf - c->got;
        }
        ssize_t r = read(c->fd, c->buf + c->got, room);
        if (r < 0) {
            if (errno == EAGAIN) return 0;
            return finish(c, 0);
        }
        if (r == 0) /* EOF: close-delimited or complete */
            return finish(c, http_status_ok(c->buf, c->got));
        size_t before = c->got;
        c->got += r;
        if (c->need < 0) {
            c->buf[c->got < sizeof c->buf ? c->got : sizeof c->buf - 1] = 0;
            char *end = memmem(c->buf, c->got, "\r\n\r\n", 4);
            if (end) {
                long head = end + 4 - c->buf;
                char *cl = strcasestr(c->buf, "\r\ncontent-length:");
                if (cl && cl < end) c->need = head + atol(cl + 17);
                else c->need = 1L << 40; /* until EOF */
            }
        }
        (void)before;
        if (c->need >= 0 && (long)c->got >= c->need)
            return finish(c, http_status_ok(c->buf, c->got));
    }
}

/* http-keepalive: drives one kept connection; returns the probes it finished (0 or more), and
 * sets *closed when the connection failed and was closed (its probe counted as failed). */
static unsigned long on_event_keepalive(struct conn *c, uint32_t events, int *closed) {
    unsigned long finished = 0;
    *closed = 0;
    if (c->state == CONNECTING) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return 0;
        goto send;
    }
    for (;;) {
        size_t room = sizeof c->buf - c->got;
        ssize_t r = read(c->fd, c->buf + c->got, room);
        if (r < 0 && errno == EAGAIN) return finished;
        if (r <= 0) goto fail; /* an error, or the server closed a kept connection */
        c->got += r;
        int st = raw_http_feed(&c->resp, c->buf, &c->got, sizeof c->buf, (size_t)r);
        if (st == RH_BAD) goto fail;
        if (st != RH_DONE) continue;
        if (c->resp.status >= 200 && c->resp.status < 300) ok_count++; else fail_count++;
        finished++;
        if (started_count >= n_total) { /* nothing more to ask: the connection is done */
            close(c->fd);
            c->fd = -1;
            *closed = 1;
            return finished;
        }
        started_count++;
    send:
        raw_http_reset(&c->resp);
        c->got = 0;
        if (write(c->fd, request, reqlen) != (ssize_t)reqlen) goto fail;
        c->state = READING;
    }
fail:
    close(c->fd);
    c->fd = -1;
    fail_count++;
    *closed = 1;
    return finished + 1;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: raw_c tcp HOST PORT N CONC [LABEL] | raw_c http HOST PORT N CONC PATH [LABEL]\n"
                        "       raw_c {tcp-reuse|http-reuse|http-keepalive} ...\n");
        return 64;
    }
    http = strncmp(argv[1], "http", 4) == 0;
    reuse = strstr(argv[1], "-reuse") != NULL;
    keepalive = strcmp(argv[1], "http-keepalive") == 0;
    const char *host = argv[2];
    int port = atoi(argv[3]);
    unsigned long n = strtoul(argv[4], 0, 10);
    unsigned conc = (unsigned)atoi(argv[5]);
    const char *path = http && argc > 6 ? argv[6] : "/";
    const char *label = argc > (http ? 7 : 6) ? argv[http ? 7 : 6]
                      : keepalive ? "http_keepalive" : http ? "http_oneshot" : "tcp_oneshot";

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
        fprintf(stderr, "raw_c: %s is not an IP address\n", host);
        return 64;
    }
    /* Keep-alive: libprober's keep-alive request is this one without "Connection: close". */
    const char *conn_hdr = keepalive ? "" : "Connection: close\r\n";
    if (strchr(host, ':'))
        reqlen = snprintf(request, sizeof request,
            "GET %s HTTP/1.1\r\nHost: [%s]:%d\r\nUser-Agent: kube-probe/1.37\r\nAccept: */*\r\n%s\r\n",
            path, host, port, conn_hdr);
    else
        reqlen = snprintf(request, sizeof request,
            "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: kube-probe/1.37\r\nAccept: */*\r\n%s\r\n",
            path, host, port, conn_hdr);

    ep = epoll_create1(EPOLL_CLOEXEC);
    struct conn *conns = calloc(conc, sizeof *conns);
    struct epoll_event *evs = calloc(conc, sizeof *evs);
    pool = calloc(conc, sizeof *pool);
    if (ep < 0 || !conns || !evs || !pool) { perror("raw_c"); return 1; }

    struct rusage r0, r1;
    double t0 = now_s();
    getrusage(RUSAGE_SELF, &r0);
    unsigned long started = 0, done = 0;
    n_total = n;
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
            if (keepalive) {
                int closed;
                started_count = started;
                done += on_event_keepalive(c, evs[j].events, &closed);
                started = started_count;
                if (!closed) continue;
                while (started < n) { /* a failed kept connection: the next probe dials again */
                    started++;
                    if (start(c, idx) == 0) break;
                    fail_count++;
                    done++;
                }
            } else if (on_event(c, evs[j].events)) {
                done++;
                while (started < n) {
                    started++;
                    if (start(c, idx) == 0) break;
                    fail_count++;
                    done++;
                }
            }
        }
        if (k == 0) { fprintf(stderr, "raw_c: no progress for 1 s\n"); }
    }
    getrusage(RUSAGE_SELF, &r1);
    double wall = now_s() - t0;
    double user = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1e6 + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec);
    double sys = (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e6 + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
    printf("BENCH scenario=%s impl=%s n=%lu ok=%lu fail=%lu wall_s=%.3f rate_per_s=%.1f "
           "cpu_us_per_probe=%.2f user_us_per_probe=%.2f sys_us_per_probe=%.2f cpu_pct=%.1f rss_kb=%ld conc=%u\n",
           label, reuse ? "raw_c_reuse" : "raw_c", n, ok_count, fail_count, wall, n / wall, (user + sys) / n, user / n, sys / n,
           (user + sys) / 1e4 / wall, r1.ru_maxrss, conc);
    return 0;
}

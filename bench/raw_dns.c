/*
 * raw_dns: the physical limit of ci/bench.sh's dns_query scenario on this machine.
 *
 *   raw_dns HOST PORT NAME N CONC [LABEL]   N UDP queries (type A, class IN, RD) of NAME to
 *                                          HOST:PORT (an IPv4 address), CONC in flight
 *
 * One thread, one epoll instance, and per query what libprober's DNS probe does with the
 * fewest syscalls that do it: a new socket (a fresh source port per query, as every resolver
 * since 2008), connect (the kernel then drops datagrams from any other address or port),
 * epoll_ctl(ADD), send, recv when readable, close; plus one epoll_wait per batch of ready
 * sockets. The reply is taken when it is a response with the query's id (a counter here; random
 * in libprober), NOERROR; its question is not parsed (libprober parses the whole message).
 *
 * Prints one line: BENCH scenario=LABEL impl=raw_c n=... rate_per_s=... cpu_us_per_probe=...
 * with CPU = user + sys from getrusage(RUSAGE_SELF) around the loop, rss_kb = ru_maxrss.
 * Build: cc -O2 -o raw_dns raw_dns.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct query {
    int fd;
    uint16_t id;
};

static struct sockaddr_in server;
static unsigned char wire[300]; /* the query; bytes 0-1 are its id */
static size_t wirelen;
static int ep;
static uint16_t next_id;
static unsigned long ok_count, fail_count;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The query of NAME, type A, class IN, RD set: header, labels, type and class. */
static int encode(const char *name) {
    unsigned char *p = wire + 12;
    memset(wire, 0, 12);
    wire[2] = 0x01; /* RD */
    wire[5] = 1;    /* QDCOUNT */
    const char *s = name;
    while (*s) {
        const char *dot = strchr(s, '.');
        size_t len = dot ? (size_t)(dot - s) : strlen(s);
        if (len == 0 || len > 63 || p + len + 6 > wire + sizeof wire) return -1;
        *p++ = (unsigned char)len;
        memcpy(p, s, len);
        p += len;
        s += len;
        if (*s == '.') s++;
    }
    *p++ = 0;
    *p++ = 0; *p++ = 1; /* A */
    *p++ = 0; *p++ = 1; /* IN */
    wirelen = (size_t)(p - wire);
    return 0;
}

static int start(struct query *q, unsigned idx) {
    q->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (q->fd < 0) return -1;
    if (connect(q->fd, (struct sockaddr *)&server, sizeof server) < 0) goto fail;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = idx};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, q->fd, &ev) < 0) goto fail;
    q->id = next_id++;
    wire[0] = (unsigned char)(q->id >> 8);
    wire[1] = (unsigned char)q->id;
    if (send(q->fd, wire, wirelen, 0) != (ssize_t)wirelen) goto fail;
    return 0;
fail:
    close(q->fd);
    q->fd = -1;
    return -1;
}

/* Reads the ready socket of q: 1 when the query is answered (or failed), 0 to wait on. */
static int on_ready(struct query *q) {
    unsigned char buf[513];
    for (;;) {
        ssize_t n = recv(q->fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 0;
        if (n < 0) { fail_count++; break; }
        if (n < 12 || ((buf[0] << 8) | buf[1]) != q->id || !(buf[2] & 0x80)) continue; /* not ours */
        if ((buf[3] & 0x0f) == 0) ok_count++; else fail_count++;
        break;
    }
    close(q->fd);
    q->fd = -1;
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: raw_dns HOST PORT NAME N CONC [LABEL]\n");
        return 64;
    }
    const char *label = argc > 6 ? argv[6] : "dns_query";
    unsigned long n = strtoul(argv[4], NULL, 10);
    unsigned conc = (unsigned)strtoul(argv[5], NULL, 10);
    server.sin_family = AF_INET;
    server.sin_port = htons((uint16_t)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &server.sin_addr) != 1 || encode(argv[3]) < 0 || conc == 0) {
        fprintf(stderr, "raw_dns: bad host, name or concurrency\n");
        return 64;
    }
    ep = epoll_create1(EPOLL_CLOEXEC);
    struct query *qs = calloc(conc, sizeof *qs);
    struct epoll_event *evs = calloc(conc, sizeof *evs);
    if (ep < 0 || !qs || !evs) { perror("raw_dns"); return 1; }

    struct rusage r0, r1;
    double t0 = now_s();
    getrusage(RUSAGE_SELF, &r0);
    unsigned long started = 0, done = 0;
    for (unsigned i = 0; i < conc && started < n; i++) {
        started++;
        if (start(&qs[i], i) < 0) { fail_count++; done++; }
    }
    while (done < n) {
        int k = epoll_wait(ep, evs, (int)conc, 1000);
        if (k < 0 && errno != EINTR) { perror("epoll_wait"); return 1; }
        if (k == 0) { fprintf(stderr, "raw_dns: no answer for 1 s\n"); return 1; }
        for (int j = 0; j < k; j++) {
            unsigned idx = (unsigned)evs[j].data.u64;
            struct query *q = &qs[idx];
            if (q->fd < 0 || !on_ready(q)) continue;
            done++;
            while (started < n) {
                started++;
                if (start(q, idx) == 0) break;
                fail_count++;
                done++;
            }
        }
    }
    getrusage(RUSAGE_SELF, &r1);
    double wall = now_s() - t0;
    double user = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1e6 + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec);
    double sys = (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e6 + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
    printf("BENCH scenario=%s impl=raw_c n=%lu ok=%lu fail=%lu wall_s=%.3f rate_per_s=%.1f "
           "cpu_us_per_probe=%.2f user_us_per_probe=%.2f sys_us_per_probe=%.2f cpu_pct=%.1f rss_kb=%ld conc=%u\n",
           label, n, ok_count, fail_count, wall, n / wall, (user + sys) / n, user / n, sys / n,
           (user + sys) / 1e4 / wall, r1.ru_maxrss, conc);
    return 0;
}

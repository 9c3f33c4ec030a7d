/* C helpers for the cgo package (included by several Go files' preambles; all static inline).
 *
 * prober_last_error() is per OS thread, and a goroutine may move to another thread (or another
 * goroutine may run a libprober call on this one) as soon as a cgo call returns. So every
 * fallible call is wrapped here: the call and the copy of its error text happen inside one cgo
 * call, into a buffer the Go side owns. */
#ifndef PROBER_GO_SHIM_H
#define PROBER_GO_SHIM_H

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <prober.h>

typedef struct {
  size_t len;
  char msg[1024];
} gp_err;

static inline prober_status gp_fail(prober_status rc, gp_err *err) {
  if (rc != PROBER_OK && err != NULL) {
    prober_str s = prober_last_error();
    size_t n = s.len < sizeof err->msg ? s.len : sizeof err->msg;
    if (n > 0) memcpy(err->msg, s.ptr, n);
    err->len = n;
  }
  return rc;
}

static inline prober_status gp_oom(gp_err *err) {
  static const char oom[] = "out of memory";
  if (err != NULL) {
    memcpy(err->msg, oom, sizeof oom - 1);
    err->len = sizeof oom - 1;
  }
  return PROBER_E_IO;
}

/* ---- specs ---------------------------------------------------------------------------- */

/* TCP and HTTP specs take the Go string itself and copy it here (NUL-terminated) instead of
 * through C.CString and C.free: two cgo calls fewer per spec. The Go side has checked that the
 * string holds no NUL byte. gp_cstr copies s into small when it fits, else into malloc'ed
 * memory (NULL when out of memory); gp_cstr_free releases what it returned. */
#define GP_SMALL 1024
static inline char *gp_cstr(_GoString_ s, char small[GP_SMALL]) {
  size_t n = _GoStringLen(s);
  char *p = n < GP_SMALL ? small : (char *)malloc(n + 1);
  if (p == NULL) return NULL;
  if (n > 0) memcpy(p, _GoStringPtr(s), n);
  p[n] = 0;
  return p;
}
static inline void gp_cstr_free(char *p, char small[GP_SMALL]) {
  if (p != small) free(p);
}
static inline prober_status gp_spec_new_tcp_s(_GoString_ host, int32_t port, prober_spec **out, gp_err *err) {
  char small[GP_SMALL];
  char *p = gp_cstr(host, small);
  if (p == NULL) return gp_oom(err);
  prober_status rc = gp_fail(prober_spec_new_tcp(p, port, out), err);
  gp_cstr_free(p, small);
  return rc;
}
static inline prober_status gp_spec_new_http_s(_GoString_ url, prober_spec **out, gp_err *err) {
  char small[GP_SMALL];
  char *p = gp_cstr(url, small);
  if (p == NULL) return gp_oom(err);
  prober_status rc = gp_fail(prober_spec_new_http(p, out), err);
  gp_cstr_free(p, small);
  return rc;
}
static inline prober_status gp_spec_new_exec(char **argv, size_t argc, prober_spec **out, gp_err *err) {
  return gp_fail(prober_spec_new_exec((const char *const *)argv, argc, out), err);
}
static inline prober_status gp_spec_new_grpc(const char *host, int32_t port, const char *service,
                                             prober_spec **out, gp_err *err) {
  return gp_fail(prober_spec_new_grpc(host, port, service, out), err);
}
static inline prober_status gp_spec_set_timeout_ms(prober_spec *s, uint32_t ms, gp_err *err) {
  return gp_fail(prober_spec_set_timeout_ms(s, ms), err);
}
static inline prober_status gp_spec_set_period_ms(prober_spec *s, uint32_t ms, gp_err *err) {
  return gp_fail(prober_spec_set_period_ms(s, ms), err);
}
static inline prober_status gp_spec_set_initial_delay_ms(prober_spec *s, uint32_t ms, gp_err *err) {
  return gp_fail(prober_spec_set_initial_delay_ms(s, ms), err);
}
static inline prober_status gp_spec_set_thresholds(prober_spec *s, uint32_t ok, uint32_t bad, gp_err *err) {
  return gp_fail(prober_spec_set_thresholds(s, ok, bad), err);
}
static inline prober_status gp_spec_set_jitter(prober_spec *s, bool on, gp_err *err) {
  return gp_fail(prober_spec_set_jitter(s, on), err);
}
static inline prober_status gp_spec_set_output_limit(prober_spec *s, size_t n, gp_err *err) {
  return gp_fail(prober_spec_set_output_limit(s, n), err);
}
static inline prober_status gp_spec_add_header(prober_spec *s, const char *name, const char *value, gp_err *err) {
  return gp_fail(prober_spec_add_header(s, name, value), err);
}
static inline prober_status gp_spec_set_env(prober_spec *s, const char *name, const char *value, gp_err *err) {
  return gp_fail(prober_spec_set_env(s, name, value), err);
}
static inline prober_status gp_spec_set_workdir(prober_spec *s, const char *dir, gp_err *err) {
  return gp_fail(prober_spec_set_workdir(s, dir), err);
}
static inline prober_status gp_spec_set_namespaces_of(prober_spec *s, uint32_t pid, gp_err *err) {
  return gp_fail(prober_spec_set_namespaces_of(s, pid), err);
}
static inline prober_status gp_spec_set_redirect_policy(prober_spec *s, uint32_t p, gp_err *err) {
  return gp_fail(prober_spec_set_redirect_policy(s, p), err);
}
static inline prober_status gp_spec_set_close_policy(prober_spec *s, uint32_t p, gp_err *err) {
  return gp_fail(prober_spec_set_close_policy(s, p), err);
}
static inline prober_status gp_spec_enable_tls(prober_spec *s, gp_err *err) {
  return gp_fail(prober_spec_enable_tls(s), err);
}
static inline prober_status gp_spec_set_tls_verify(prober_spec *s, uint32_t mode, const char *ca, gp_err *err) {
  return gp_fail(prober_spec_set_tls_verify(s, mode, ca), err);
}
static inline prober_status gp_spec_set_tls_server_name(prober_spec *s, const char *name, gp_err *err) {
  return gp_fail(prober_spec_set_tls_server_name(s, name), err);
}
static inline prober_status gp_spec_set_tls_client_cert(prober_spec *s, const char *cert, const char *key, gp_err *err) {
  return gp_fail(prober_spec_set_tls_client_cert(s, cert, key), err);
}
static inline prober_status gp_spec_set_tls_min_version(prober_spec *s, uint32_t v, gp_err *err) {
  return gp_fail(prober_spec_set_tls_min_version(s, v), err);
}
static inline prober_status gp_spec_set_tls_max_version(prober_spec *s, uint32_t v, gp_err *err) {
  return gp_fail(prober_spec_set_tls_max_version(s, v), err);
}
static inline prober_status gp_spec_set_expect_status(prober_spec *s, const char *set, gp_err *err) {
  return gp_fail(prober_spec_set_expect_status(s, set), err);
}
static inline prober_status gp_spec_set_expect_body(prober_spec *s, const char *re, gp_err *err) {
  return gp_fail(prober_spec_set_expect_body(s, re), err);
}
static inline prober_status gp_spec_set_tls_resumption(prober_spec *s, bool on, gp_err *err) {
  return gp_fail(prober_spec_set_tls_resumption(s, on), err);
}
static inline prober_status gp_spec_set_keep_alive(prober_spec *s, bool on, gp_err *err) {
  return gp_fail(prober_spec_set_keep_alive(s, on), err);
}
static inline prober_status gp_spec_set_unhealthy_period_ms(prober_spec *s, uint32_t ms, gp_err *err) {
  return gp_fail(prober_spec_set_unhealthy_period_ms(s, ms), err);
}
static inline prober_status gp_spec_set_transition_period_ms(prober_spec *s, uint32_t ms, gp_err *err) {
  return gp_fail(prober_spec_set_transition_period_ms(s, ms), err);
}
static inline prober_status gp_spec_set_jitter_percent(prober_spec *s, uint32_t percent, gp_err *err) {
  return gp_fail(prober_spec_set_jitter_percent(s, percent), err);
}
static inline prober_status gp_spec_set_tcp_send(prober_spec *s, const uint8_t *data, size_t len, gp_err *err) {
  return gp_fail(prober_spec_set_tcp_send(s, data, len), err);
}
static inline prober_status gp_spec_set_tcp_expect(prober_spec *s, const char *re, gp_err *err) {
  return gp_fail(prober_spec_set_tcp_expect(s, re), err);
}

/* ---- requests beyond the kubelet (issue 25) ------------------------------------------- */

static inline prober_status gp_spec_set_method(prober_spec *s, const char *m, gp_err *err) {
  return gp_fail(prober_spec_set_method(s, m), err);
}
static inline prober_status gp_spec_new_unix(const char *socket, prober_spec **out, gp_err *err) {
  return gp_fail(prober_spec_new_unix(socket, out), err);
}
static inline prober_status gp_spec_set_unix_socket(prober_spec *s, const char *socket, gp_err *err) {
  return gp_fail(prober_spec_set_unix_socket(s, socket), err);
}
static inline prober_status gp_spec_add_grpc_metadata(prober_spec *s, const char *k, const char *v, gp_err *err) {
  return gp_fail(prober_spec_add_grpc_metadata(s, k, v), err);
}
static inline prober_status gp_spec_set_grpc_user_agent(prober_spec *s, const char *ua, gp_err *err) {
  return gp_fail(prober_spec_set_grpc_user_agent(s, ua), err);
}
static inline prober_status gp_spec_set_grpc_authority(prober_spec *s, const char *a, gp_err *err) {
  return gp_fail(prober_spec_set_grpc_authority(s, a), err);
}
static inline prober_status gp_spec_set_tcp_starttls(prober_spec *s, bool on, gp_err *err) {
  return gp_fail(prober_spec_set_tcp_starttls(s, on), err);
}
static inline prober_status gp_spec_add_tcp_step_with_flags(prober_spec *s, const char *expect,
                                                            const uint8_t *send, size_t len, uint32_t flags,
                                                            gp_err *err) {
  return gp_fail(prober_spec_add_tcp_step_with_flags(s, expect, send, len, flags), err);
}
static inline prober_status gp_spec_add_tcp_step_expect_bytes(prober_spec *s, const uint8_t *want,
                                                              size_t want_len, const uint8_t *send,
                                                              size_t len, uint32_t flags, gp_err *err) {
  return gp_fail(prober_spec_add_tcp_step_expect_bytes(s, want, want_len, send, len, flags), err);
}
static inline prober_status gp_spec_set_body(prober_spec *s, const uint8_t *data, size_t len, gp_err *err) {
  return gp_fail(prober_spec_set_body(s, data, len), err);
}

/* ---- blocking check ------------------------------------------------------------------- */

static inline prober_status gp_check_blocking(const prober_spec *s, prober_outcome **out, gp_err *err) {
  return gp_fail(prober_check(s, out), err);
}

/* ---- engines -------------------------------------------------------------------------- */

/* threads 1 is prober_engine_new_with_flags exactly (no engine thread). */
static inline prober_status gp_engine_new(uint32_t flags, uint32_t threads, prober_engine **out, gp_err *err) {
  if (threads == 1) return gp_fail(prober_engine_new_with_flags(flags, out), err);
  return gp_fail(prober_engine_new_with_threads(flags, threads, out), err);
}
static inline prober_status gp_engine_add_target(prober_engine *e, uint64_t *t, gp_err *err) {
  return gp_fail(prober_engine_add_target(e, t), err);
}
static inline prober_status gp_engine_set_probe(prober_engine *e, uint64_t t, uint32_t role, const prober_spec *s, gp_err *err) {
  return gp_fail(prober_engine_set_probe(e, t, role, s), err);
}
static inline prober_status gp_engine_clear_probe(prober_engine *e, uint64_t t, uint32_t role, gp_err *err) {
  return gp_fail(prober_engine_clear_probe(e, t, role), err);
}
static inline prober_status gp_engine_restart_target(prober_engine *e, uint64_t t, gp_err *err) {
  return gp_fail(prober_engine_restart_target(e, t), err);
}
static inline prober_status gp_engine_remove_target(prober_engine *e, uint64_t t, gp_err *err) {
  return gp_fail(prober_engine_remove_target(e, t), err);
}
static inline prober_status gp_engine_trigger(prober_engine *e, uint64_t t, uint32_t role, gp_err *err) {
  return gp_fail(prober_engine_trigger(e, t, role), err);
}
static inline prober_status gp_engine_stats(prober_engine *e, prober_engine_stats *st, gp_err *err) {
  return gp_fail(prober_engine_get_stats(e, st), err);
}
static inline prober_status gp_engine_published(prober_engine *e, uint64_t t, uint32_t role, uint32_t *res, gp_err *err) {
  return gp_fail(prober_engine_published(e, t, role, res), err);
}

/* ---- the Engine's driving goroutine --------------------------------------------------- */

#define GP_DRAIN_CAP 256

/* A queued Submit. The spec is owned by the queue and freed by gp_loop_turn; when the engine
 * refuses it, rc is set and msg (malloc'ed, free with free()) holds prober_last_error's text. */
typedef struct {
  prober_spec *spec;
  uint64_t tag;
  prober_status rc;
  size_t msg_len;
  char *msg;
} gp_sub;

/* A queue of Submits in C memory (so that cgo need not check it for Go pointers). */
typedef struct {
  gp_sub *v;
  size_t n, cap;
} gp_subq;

/* Makes room for at least one more entry (the Go side appends with plain stores); 0, or -1
 * when out of memory (the queue is unchanged). */
static inline int gp_subq_grow(gp_subq *q) {
  if (q->n < q->cap) return 0;
  size_t cap = q->cap < 64 ? 64 : q->cap * 2;
  gp_sub *v = (gp_sub *)realloc(q->v, cap * sizeof *v);
  if (v == NULL) return -1;
  q->v = v;
  q->cap = cap;
  return 0;
}

/* Frees the specs still queued (never started) and the queue's memory. */
static inline void gp_subq_free(gp_subq *q) {
  for (size_t i = 0; i < q->n; i++) prober_spec_free(q->v[i].spec);
  free(q->v);
  q->v = NULL;
  q->n = q->cap = 0;
}

/* The driving goroutine's C state (one calloc per engine). */
typedef struct {
  prober_engine *e;
  int efd; /* the engine's descriptor, polled by gp_loop_sleep (never closed here) */
  /* Submit queues: q[shared] takes Submits (under the Go side's qmu), the other one is the
   * driving goroutine's; they swap at the start of each turn. */
  gp_subq q[2];
  /* results of the last turn */
  size_t n;           /* events in ev */
  int64_t timeout_ms; /* when the next turn is needed without I/O: -1 never, 0 now */
  int64_t due_ns;     /* that instant on CLOCK_MONOTONIC, when timeout_ms > 0 */
  prober_status rc;   /* prober_engine_step's status; err holds its text */
  gp_err err;
  prober_event ev[GP_DRAIN_CAP]; /* views valid until the next turn */
  /* What else the turn read of ev[i]'s run, while the engine still held the runs' outcomes:
   * GP_FACTS_DNS (fx[i].dns), GP_FACTS_ICMP (fx[i].icmp) or 0. A run has one or the other, so
   * they share their slot (cgo shows a union to Go as bytes: outcome.go casts). */
  unsigned char facts[GP_DRAIN_CAP];
  union {
    prober_dns_facts dns;
    prober_icmp_facts icmp;
  } fx[GP_DRAIN_CAP];
} gp_loop;
#define GP_FACTS_DNS 1
#define GP_FACTS_ICMP 2

static inline int64_t gp_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void gp_loop_init(gp_loop *l, prober_engine *e) {
  l->e = e;
  l->efd = prober_engine_fd(e);
}

/* Sleeps until the engine's descriptor is readable (I/O, prober_engine_wakeup from any
 * thread, or on Linux the engine's next timer falling due: its timerfd is in the poll) or the
 * last turn's timeout passes, whichever is first. It does not touch the engine
 * object, only polls its descriptor, so other threads may use the engine meanwhile (under the
 * Go side's mu). poll does not consume the readiness (the next turn's step does), so a wake-up
 * made after the last turn and before this poll makes it return at once. */
static inline void gp_loop_sleep(gp_loop *l) {
  int ms = -1;
  if (l->timeout_ms == 0) return;
  if (l->timeout_ms > 0) {
    int64_t left = l->due_ns - gp_now_ns();
    if (left <= 0) return;
    int64_t m = (left + 999999) / 1000000;
    ms = m > 0x7fffffff ? 0x7fffffff : (int)m;
  }
  struct pollfd p;
  p.fd = l->efd;
  p.events = POLLIN;
  p.revents = 0;
  (void)poll(&p, 1, ms); /* EINTR: the caller turns and comes back */
}

/* One non-blocking turn of the event loop in one cgo call: start the queued submissions (q is
 * emptied; the refused ones, if any, are moved to q->v[0..refused) with rc and msg set, for the
 * caller to report before q takes Submits again), step (ready I/O, due timers), drain up to max
 * (at most GP_DRAIN_CAP) events into l->ev (with the DNS or ICMP facts of their runs), and say how long the host may sleep before the next
 * turn. With max 0 (the host has no room for events) the events stay in the engine, under its
 * policy for a host that drains late, and do not make the next turn due. Returns how many
 * submissions were refused. */
static inline size_t gp_loop_turn(gp_loop *l, gp_subq *q, size_t max) {
  prober_engine *e = l->e;
  size_t refused = 0;
  for (size_t i = 0; i < q->n; i++) {
    gp_sub s = q->v[i];
    prober_status r = prober_engine_submit(e, s.spec, s.tag);
    prober_spec_free(s.spec);
    if (r != PROBER_OK) {
      prober_str m = prober_last_error();
      gp_sub *out = &q->v[refused++];
      memset(out, 0, sizeof *out);
      out->tag = s.tag;
      out->rc = r;
      out->msg = m.len > 0 ? (char *)malloc(m.len) : NULL;
      if (out->msg != NULL) {
        memcpy(out->msg, m.ptr, m.len);
        out->msg_len = m.len;
      }
    }
  }
  q->n = 0;
  prober_status r = prober_engine_step(e);
  l->rc = r == PROBER_OK ? PROBER_OK : gp_fail(r, &l->err);
  if (max > GP_DRAIN_CAP) max = GP_DRAIN_CAP;
  size_t n = max > 0 ? prober_engine_drain(e, l->ev, max) : 0;
  l->n = n;
  for (size_t i = 0; i < n; i++) {
    l->facts[i] = 0;
    if (!l->ev[i].has_outcome) continue;
    if (prober_engine_event_dns(e, &l->ev[i], &l->fx[i].dns))
      l->facts[i] = GP_FACTS_DNS;
    else if (prober_engine_event_icmp(e, &l->ev[i], &l->fx[i].icmp))
      l->facts[i] = GP_FACTS_ICMP;
  }
  l->timeout_ms = (max > 0 && prober_engine_pending(e) > 0) ? 0 : prober_engine_timeout_ms(e);
  if (l->timeout_ms > 0) {
    int64_t ms = l->timeout_ms > 0x7fffffff ? 0x7fffffff : l->timeout_ms;
    l->due_ns = gp_now_ns() + ms * 1000000;
  }
  return refused;
}

#endif

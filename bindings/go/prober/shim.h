/* C helpers for the cgo package (included by several Go files' preambles; all static inline).
 *
 * prober_last_error() is per OS thread, and a goroutine may move to another thread (or another
 * goroutine may run a libprober call on this one) as soon as a cgo call returns. So every
 * fallible call is wrapped here: the call and the copy of its error text happen inside one cgo
 * call, into a buffer the Go side owns. */
#ifndef PROBER_GO_SHIM_H
#define PROBER_GO_SHIM_H

#include <stdlib.h>
#include <string.h>
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

/* ---- specs ---------------------------------------------------------------------------- */

static inline prober_status gp_spec_new_tcp(const char *host, int32_t port, prober_spec **out, gp_err *err) {
  return gp_fail(prober_spec_new_tcp(host, port, out), err);
}
static inline prober_status gp_spec_new_http(const char *url, prober_spec **out, gp_err *err) {
  return gp_fail(prober_spec_new_http(url, out), err);
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

/* ---- blocking check ------------------------------------------------------------------- */

static inline prober_status gp_check_blocking(const prober_spec *s, prober_outcome **out, gp_err *err) {
  return gp_fail(prober_check(s, out), err);
}

/* ---- cancellable one-shot check: a private engine per call ---------------------------- */

typedef struct {
  prober_engine *e;
  int cancelled; /* accessed with __atomic builtins */
  prober_event ev;
} gp_check;

/* Creates the engine and submits the spec. On success *out owns both (gp_check_free). */
static inline prober_status gp_check_start(const prober_spec *s, gp_check **out, gp_err *err) {
  gp_check *c = (gp_check *)calloc(1, sizeof *c);
  if (c == NULL) {
    if (err != NULL) {
      static const char oom[] = "out of memory";
      memcpy(err->msg, oom, sizeof oom - 1);
      err->len = sizeof oom - 1;
    }
    return PROBER_E_IO;
  }
  prober_status rc = prober_engine_new(&c->e);
  if (rc != PROBER_OK) {
    gp_fail(rc, err);
    free(c);
    return rc;
  }
  rc = prober_engine_submit(c->e, s, 1);
  if (rc != PROBER_OK) {
    gp_fail(rc, err);
    prober_engine_free(c->e);
    free(c);
    return rc;
  }
  *out = c;
  return PROBER_OK;
}

/* Runs the engine until the check's event arrives (returns 1; c->ev is valid until
 * gp_check_free), until gp_check_cancel (returns 0), or until the engine fails (returns -1,
 * *rc and *err set). */
static inline int gp_check_run(gp_check *c, prober_status *rc, gp_err *err) {
  for (;;) {
    if (__atomic_load_n(&c->cancelled, __ATOMIC_ACQUIRE)) return 0;
    if (prober_engine_drain(c->e, &c->ev, 1) == 1) return 1;
    prober_status r = prober_engine_wait(c->e, -1);
    if (r != PROBER_OK) {
      *rc = gp_fail(r, err);
      return -1;
    }
  }
}

/* Any thread, while c lives: makes gp_check_run return 0 soon. */
static inline void gp_check_cancel(gp_check *c) {
  __atomic_store_n(&c->cancelled, 1, __ATOMIC_RELEASE);
  prober_engine_wakeup(c->e);
}

/* Frees the engine (cancelling the probe: sockets closed, commands killed and reaped). */
static inline void gp_check_free(gp_check *c) {
  if (c == NULL) return;
  prober_engine_free(c->e);
  free(c);
}

/* ---- engines -------------------------------------------------------------------------- */

static inline prober_status gp_engine_new(uint32_t flags, prober_engine **out, gp_err *err) {
  return gp_fail(prober_engine_new_with_flags(flags, out), err);
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
static inline prober_status gp_engine_submit(prober_engine *e, const prober_spec *s, uint64_t tag, gp_err *err) {
  return gp_fail(prober_engine_submit(e, s, tag), err);
}
static inline prober_status gp_engine_published(prober_engine *e, uint64_t t, uint32_t role, uint32_t *res, gp_err *err) {
  return gp_fail(prober_engine_published(e, t, role, res), err);
}

/* One turn of the event loop in one cgo call: hand over queued events if there are any (events
 * queued by calls made while the loop was parked), else wait up to timeout_ms and drain what the
 * wait produced. Returns the number of events in buf; on a failing wait, *rc and *err are set. */
static inline size_t gp_engine_turn(prober_engine *e, int32_t timeout_ms, prober_event *buf, size_t cap,
                                    prober_status *rc, gp_err *err) {
  size_t n = prober_engine_drain(e, buf, cap);
  if (n > 0) return n;
  prober_status r = prober_engine_wait(e, timeout_ms);
  if (r != PROBER_OK) {
    *rc = gp_fail(r, err);
    return 0;
  }
  return prober_engine_drain(e, buf, cap);
}

#endif

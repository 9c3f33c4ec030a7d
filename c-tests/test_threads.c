/* prober_engine_new_with_threads: two engine threads behind one prober_engine, driven through
 * the caller's descriptor (poll + step + drain) and through wait. Targets spread over both
 * engines all report and can be triggered and removed; one-shot checks on both complete,
 * with and without a completion; a cancel reaches both; freeing the engine with checks in
 * flight kills and reaps their commands and leaks nothing (valgrind runs this too). */
#include <fcntl.h>
#include <poll.h>

#include "testutil.h"

#define TARGETS 8

static void refuses(uint32_t threads) {
  prober_engine *e = NULL;
  CHECK_STATUS(prober_engine_new_with_threads(0, threads, &e), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "engine threads"));
  CHECK(e == NULL);
}

/* Waits in the caller's own poll on the engine's descriptor, then steps and drains. */
static size_t poll_turn(prober_engine *e, prober_event *ev, size_t cap) {
  struct pollfd p = {prober_engine_fd(e), POLLIN, 0};
  CHECK(p.fd >= 0);
  int64_t ms = prober_engine_timeout_ms(e);
  CHECK(ms == -1); /* the engine threads keep their own timers */
  (void)poll(&p, 1, 50); /* bounded, so that the deadline check below runs */
  CHECK_OK(prober_engine_step(e));
  return prober_engine_drain(e, ev, cap);
}

static int completions;
static void done(void *user, const prober_event *ev) {
  CHECK(ev->kind == PROBER_EVENT_CHECK && ev->tag == 7 && ev->result == PROBER_RESULT_SUCCESS);
  CHECK(user == &completions);
  completions++;
}

static prober_spec *tcp_spec(int port) {
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", port, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  return s;
}

static prober_spec *sleep_spec(void) {
  const char *argv[] = {"sleep", "30"};
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_exec(argv, 2, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 20000));
  return s;
}

int main(void) {
  refuses(0);
  refuses(PROBER_ENGINE_MAX_THREADS + 1);
  CHECK_STATUS(prober_engine_new_with_threads(0, 2, NULL), PROBER_E_NULL);

  int ports[2];
  int listeners[2] = {listen_loopback(&ports[0]), listen_loopback(&ports[1])};
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new_with_threads(PROBER_ENGINE_EVERY_RUN, 2, &e));
  int fd = prober_engine_fd(e);
  CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC));

  /* Periodic targets, over both engines and both listeners. */
  uint64_t t[TARGETS];
  int ready[TARGETS] = {0}, runs[TARGETS] = {0};
  for (int i = 0; i < TARGETS; i++) {
    CHECK_OK(prober_engine_add_target(e, &t[i]));
    for (int j = 0; j < i; j++) CHECK(t[j] != t[i]);
    prober_spec *s = tcp_spec(ports[i % 2]);
    CHECK_OK(prober_spec_set_period_ms(s, 60000));
    CHECK_OK(prober_engine_set_probe(e, t[i], PROBER_ROLE_READINESS, s));
    prober_spec_free(s);
  }
  prober_engine_stats st;
  CHECK_OK(prober_engine_get_stats(e, &st));
  CHECK(st.targets == TARGETS);

  prober_event ev[16];
  double limit = now_s() + 30;
  int left = TARGETS;
  while (left > 0) {
    CHECK(now_s() < limit);
    size_t n = poll_turn(e, ev, 16);
    for (size_t k = 0; k < n; k++) {
      if (ev[k].kind == PROBER_EVENT_RUN) {
        for (int i = 0; i < TARGETS; i++) runs[i] += ev[k].target == t[i];
        continue;
      }
      CHECK(ev[k].kind == PROBER_EVENT_STATE);
      if (!ev[k].has_outcome) continue;
      CHECK(ev[k].result == PROBER_RESULT_SUCCESS);
      for (int i = 0; i < TARGETS; i++)
        if (ev[k].target == t[i] && !ready[i]) ready[i] = 1, left--;
    }
  }

  /* A trigger reaches each target's engine: one more run each. */
  for (int i = 0; i < TARGETS; i++) CHECK_OK(prober_engine_trigger(e, t[i], PROBER_ROLE_READINESS));
  CHECK_STATUS(prober_engine_trigger(e, t[0], PROBER_ROLE_LIVENESS), PROBER_E_NO_PROBE);
  left = TARGETS;
  while (left > 0) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    size_t n = prober_engine_drain(e, ev, 16);
    for (size_t k = 0; k < n; k++) {
      if (ev[k].kind != PROBER_EVENT_RUN) continue;
      CHECK(ev[k].result == PROBER_RESULT_SUCCESS);
      for (int i = 0; i < TARGETS; i++)
        if (ev[k].target == t[i] && ++runs[i] == 2) left--; /* the first was the initial run */
    }
  }

  /* Removal on each engine. */
  for (int i = 0; i < TARGETS; i += 2) CHECK_OK(prober_engine_remove_target(e, t[i]));
  uint32_t res = 0;
  for (int i = 0; i < TARGETS; i++) {
    prober_status want = i % 2 == 0 ? PROBER_E_UNKNOWN_TARGET : PROBER_OK;
    CHECK_STATUS(prober_engine_published(e, t[i], PROBER_ROLE_READINESS, &res), want);
    if (want == PROBER_OK) CHECK(res == PROBER_RESULT_SUCCESS);
  }
  CHECK_OK(prober_engine_get_stats(e, &st));
  CHECK(st.targets == TARGETS / 2);

  /* One-shot checks: in turn over both engines; two with a completion. */
  for (uint64_t tag = 1; tag <= 4; tag++) {
    prober_spec *s = tcp_spec(ports[tag % 2]);
    CHECK_OK(prober_engine_submit(e, s, tag));
    prober_spec_free(s);
  }
  for (int i = 0; i < 2; i++) {
    prober_spec *s = tcp_spec(ports[i]);
    CHECK_OK(prober_engine_submit_with(e, s, 7, done, &completions));
    prober_spec_free(s);
  }
  int checks = 0;
  while (checks < 4 || completions < 2) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    size_t n = prober_engine_drain(e, ev, 16);
    for (size_t k = 0; k < n; k++) {
      if (ev[k].kind != PROBER_EVENT_CHECK) continue;
      CHECK(ev[k].tag >= 1 && ev[k].tag <= 4 && ev[k].result == PROBER_RESULT_SUCCESS);
      checks++;
    }
  }
  CHECK(checks == 4 && completions == 2);

  /* A cancel reaches both engines: two checks of one tag, submitted in turn. */
  for (int i = 0; i < 2; i++) {
    prober_spec *s = sleep_spec();
    CHECK_OK(prober_engine_submit(e, s, 10));
    prober_spec_free(s);
  }
  while (prober_engine_in_flight(e) < 2) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 20));
  }
  CHECK(prober_engine_cancel_check(e, 10) == 2);
  CHECK(prober_engine_cancel_check(e, 10) == 0);
  int cancelled = 0;
  while (cancelled < 2) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    size_t n = prober_engine_drain(e, ev, 16);
    for (size_t k = 0; k < n; k++) {
      if (ev[k].kind != PROBER_EVENT_CHECK) continue;
      CHECK(ev[k].tag == 10 && ev[k].result == PROBER_RESULT_UNKNOWN &&
            ev[k].reason == PROBER_REASON_CANCELLED);
      cancelled++;
    }
  }
  CHECK(prober_engine_in_flight(e) == 0);

  /* Freed with checks in flight on both engines: commands killed and reaped, nothing leaks,
   * the completion is never called. */
  for (int i = 0; i < 2; i++) {
    prober_spec *s = sleep_spec();
    CHECK_OK(prober_engine_submit(e, s, 20));
    CHECK_OK(prober_engine_submit_with(e, s, 21, done, &completions));
    prober_spec_free(s);
  }
  while (prober_engine_in_flight(e) < 4) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 20));
  }
  prober_engine_free(e);
  CHECK(completions == 2);
  /* The killed children are reaped by the library (at once or by its reaper thread). */
  limit = now_s() + 10;
  while (count_zombie_children() != 0) {
    CHECK(now_s() < limit);
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  close(listeners[0]);
  close(listeners[1]);
  puts("test_threads: ok");
  return 0;
}

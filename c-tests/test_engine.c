/* The engine through the C ABI: targets, state events, restart, remove, trigger, submit. */
#include "testutil.h"

#define MAX_EVENTS 4096
static prober_event events[MAX_EVENTS];
typedef struct {
  uint32_t kind, role, result, reason;
  uint64_t target, tag;
  int has_outcome;
} seen_event;
static seen_event seen[MAX_EVENTS];
static size_t n_seen;

/* Runs the engine until `n` more events of `kind` (0: any) arrived, or fails after 30 s. */
static void run_until_events(prober_engine *e, uint32_t kind, size_t n) {
  double limit = now_s() + 30;
  size_t got = 0;
  while (got < n) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    size_t k = prober_engine_drain(e, events, MAX_EVENTS);
    for (size_t i = 0; i < k; i++) {
      CHECK(n_seen < MAX_EVENTS);
      /* Views are valid now, until the next drain/step/wait: check they are readable. */
      CHECK(events[i].message.ptr != NULL && events[i].message.ptr[events[i].message.len] == '\0');
      /* Timings come with an outcome (total at least), and are all -1 without one. */
      if (events[i].has_outcome) {
        CHECK(events[i].timings.total_us >= 0 && (uint64_t)events[i].timings.total_us == events[i].duration_us);
        CHECK(events[i].timings.resolve_us == -1); /* IP literals are not resolved */
      } else {
        CHECK(events[i].timings.total_us == -1 && events[i].timings.connect_us == -1);
      }
      CHECK(!events[i].has_cert_not_after);
      /* The facts: no TLS and no gRPC here; HTTP/1.1 whenever a response came. */
      CHECK(events[i].tls_version == 0);
      CHECK(events[i].http_version == (events[i].http_status != 0 ? 11u : 0u));
      CHECK(events[i].grpc_status == -1 && events[i].grpc_serving_status == -1);
      CHECK(events[i].reserved[0] == 0 && events[i].reserved[1] == 0);
      seen[n_seen++] = (seen_event){events[i].kind, events[i].role, events[i].result, events[i].reason,
                                    events[i].target, events[i].tag, events[i].has_outcome};
      if (kind == 0 || events[i].kind == kind) got++;
    }
  }
}

static void run_for(prober_engine *e, double seconds) {
  double end = now_s() + seconds;
  while (now_s() < end) {
    CHECK_OK(prober_engine_wait(e, 20));
    size_t k = prober_engine_drain(e, events, MAX_EVENTS);
    for (size_t i = 0; i < k; i++)
      seen[n_seen++] = (seen_event){events[i].kind, events[i].role, events[i].result, events[i].reason,
                                    events[i].target, events[i].tag, events[i].has_outcome};
  }
}

/* Runs until `target` publishes `result`, or fails after 30 s. */
static void run_until_state(prober_engine *e, uint64_t target, uint32_t result) {
  double limit = now_s() + 30;
  for (;;) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    size_t k = prober_engine_drain(e, events, MAX_EVENTS);
    for (size_t i = 0; i < k; i++) {
      CHECK(n_seen < MAX_EVENTS);
      seen[n_seen++] = (seen_event){events[i].kind, events[i].role, events[i].result, events[i].reason,
                                    events[i].target, events[i].tag, events[i].has_outcome};
      if (events[i].kind == PROBER_EVENT_STATE && events[i].target == target && events[i].result == result)
        return;
    }
  }
}

static const seen_event *last_state(void) {
  for (size_t i = n_seen; i > 0; i--)
    if (seen[i - 1].kind == PROBER_EVENT_STATE) return &seen[i - 1];
  return NULL;
}

int main(void) {
  target_server t = target_start();
  char url[256];
  target_url(&t, "/health", url, sizeof url);
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));
  CHECK(prober_engine_fd(e) >= 0);
  CHECK(prober_engine_timeout_ms(e) == -1);

  uint64_t target = 0;
  CHECK_OK(prober_engine_add_target(e, &target));
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_period_ms(s, 20));
  CHECK_OK(prober_spec_set_thresholds(s, 1, 1));
  CHECK_OK(prober_engine_set_probe(e, target, PROBER_ROLE_READINESS, s));
  /* set_probe copied the spec: changing or freeing ours does not affect the engine. */
  CHECK_OK(prober_spec_set_thresholds(s, 5, 5));
  CHECK_STATUS(prober_engine_set_probe(e, target, PROBER_ROLE_LIVENESS, s), PROBER_E_INVALID_THRESHOLD);
  CHECK(str_has(prober_last_error(), "success threshold must be 1 for liveness"));
  CHECK_STATUS(prober_engine_set_probe(e, target, 9, s), PROBER_E_INVALID_ENUM);
  CHECK_STATUS(prober_engine_set_probe(e, target + 999, PROBER_ROLE_READINESS, s), PROBER_E_UNKNOWN_TARGET);
  CHECK_STATUS(prober_engine_trigger(e, target, PROBER_ROLE_STARTUP), PROBER_E_NO_PROBE);
  prober_spec_free(s);
  CHECK(prober_engine_timeout_ms(e) >= 0);

  /* Initial value (no outcome), then Success. */
  run_until_events(e, PROBER_EVENT_STATE, 2);
  CHECK(seen[0].kind == PROBER_EVENT_STATE && seen[0].result == PROBER_RESULT_FAILURE && !seen[0].has_outcome);
  CHECK(seen[0].target == target && seen[0].role == PROBER_ROLE_READINESS);
  CHECK(last_state()->result == PROBER_RESULT_SUCCESS && last_state()->has_outcome);
  uint32_t published = 99;
  CHECK_OK(prober_engine_published(e, target, PROBER_ROLE_READINESS, &published));
  CHECK(published == PROBER_RESULT_SUCCESS);

  /* The server turns unhealthy: Failure with reason status. */
  target_control(&t, "/control/unhealthy");
  run_until_events(e, PROBER_EVENT_STATE, 1);
  CHECK(last_state()->result == PROBER_RESULT_FAILURE && last_state()->reason == PROBER_REASON_STATUS);
  target_control(&t, "/control/healthy");
  run_until_events(e, PROBER_EVENT_STATE, 1);
  CHECK(last_state()->result == PROBER_RESULT_SUCCESS);

  /* Restart: back to the initial value at once (an event without outcome), then Success. */
  CHECK_OK(prober_engine_restart_target(e, target));
  run_until_events(e, PROBER_EVENT_STATE, 2);
  CHECK(seen[n_seen - 2].kind == PROBER_EVENT_STATE || seen[n_seen - 1].kind == PROBER_EVENT_STATE);
  CHECK(last_state()->result == PROBER_RESULT_SUCCESS);

  /* A second target with a ten-minute period: only a trigger can run it a second time. */
  uint64_t slow = 0;
  CHECK_OK(prober_engine_add_target(e, &slow));
  CHECK(slow != target);
  target_url(&t, "/health", url, sizeof url);
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_period_ms(s, 600000));
  CHECK_OK(prober_spec_set_thresholds(s, 1, 1));
  CHECK_OK(prober_engine_set_probe(e, slow, PROBER_ROLE_READINESS, s));
  prober_spec_free(s);
  run_until_state(e, slow, PROBER_RESULT_SUCCESS);
  target_control(&t, "/control/unhealthy");
  CHECK_OK(prober_engine_trigger(e, slow, PROBER_ROLE_READINESS));
  run_until_state(e, slow, PROBER_RESULT_FAILURE);
  target_control(&t, "/control/healthy");

  /* Remove: no event about the first target afterwards. */
  CHECK_OK(prober_engine_remove_target(e, target));
  CHECK_STATUS(prober_engine_remove_target(e, target), PROBER_E_UNKNOWN_TARGET);
  size_t before = n_seen;
  run_for(e, 0.2);
  for (size_t i = before; i < n_seen; i++) CHECK(seen[i].target != target);

  /* One-shot submits carry their tags. */
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", t.port, &s));
  for (uint64_t tag = 1; tag <= 50; tag++) CHECK_OK(prober_engine_submit(e, s, tag));
  prober_spec_free(s);
  before = n_seen;
  run_until_events(e, PROBER_EVENT_CHECK, 50);
  int tags[51] = {0};
  for (size_t i = before; i < n_seen; i++)
    if (seen[i].kind == PROBER_EVENT_CHECK) {
      CHECK(seen[i].tag >= 1 && seen[i].tag <= 50 && seen[i].result == PROBER_RESULT_SUCCESS);
      tags[seen[i].tag]++;
    }
  for (int i = 1; i <= 50; i++) CHECK(tags[i] == 1);
  CHECK(prober_engine_in_flight(e) == 1 || prober_engine_in_flight(e) == 0);

  /* Every-run events when asked for. */
  prober_engine *e2 = NULL;
  CHECK_OK(prober_engine_new_with_flags(PROBER_ENGINE_EVERY_RUN, &e2));
  uint64_t t2 = 0;
  CHECK_OK(prober_engine_add_target(e2, &t2));
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", t.port, &s));
  CHECK_OK(prober_spec_set_period_ms(s, 10));
  CHECK_OK(prober_engine_set_probe(e2, t2, PROBER_ROLE_LIVENESS, s));
  prober_spec_free(s);
  run_until_events(e2, PROBER_EVENT_RUN, 5);
  prober_engine_free(e2);

  prober_engine_free(e);
  target_stop(&t);
  puts("test_engine: 1 passed, 0 failed");
  return 0;
}

/* Beyond the kubelet through the C ABI: expected statuses, body expressions, per-state
 * periods and jitter, against the prober-target server. */
#include "testutil.h"

#define MAX_EVENTS 1024
static prober_event events[MAX_EVENTS];

static prober_outcome *check_expect(const target_server *t, const char *path, const char *set,
                                    const char *regex) {
  char url[256];
  target_url(t, path, url, sizeof url);
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http(url, &s));
  if (set) CHECK_OK(prober_spec_set_expect_status(s, set));
  if (regex) CHECK_OK(prober_spec_set_expect_body(s, regex));
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  prober_spec_free(s);
  return o;
}

/* Runs `e` until `n` run events arrived (or fails after 30 s: a hang, not a timing claim). */
static size_t run_until_runs(prober_engine *e, size_t n) {
  double limit = now_s() + 30;
  size_t runs = 0;
  while (runs < n) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    size_t k = prober_engine_drain(e, events, MAX_EVENTS);
    for (size_t i = 0; i < k; i++)
      if (events[i].kind == PROBER_EVENT_RUN) runs++;
  }
  return runs;
}

int main(void) {
  target_server t = target_start();
  prober_outcome *o;

  /* Expected statuses replace the 2xx rule. */
  o = check_expect(&t, "/status/418", "200-299,418", NULL);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(prober_outcome_http_status(o) == 418);
  prober_outcome_free(o);
  o = check_expect(&t, "/status/200", "204", NULL);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_STATUS);
  CHECK(str_eq(prober_outcome_message(o), "HTTP probe failed with statuscode: 200"));
  prober_outcome_free(o);

  /* Body expressions: reason body, with a message that says so. */
  o = check_expect(&t, "/status/200?body=ready", NULL, "^ready$");
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);
  o = check_expect(&t, "/status/200?body=starting", NULL, "^ready$");
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_BODY);
  CHECK(str_has(prober_outcome_message(o), "body did not match"));
  CHECK(strcmp(prober_reason_name(PROBER_REASON_BODY), "body") == 0);
  prober_outcome_free(o);

  /* Bad input: malformed sets and expressions, wrong kinds, out-of-range periods. */
  char url[256];
  target_url(&t, "/health", url, sizeof url);
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_STATUS(prober_spec_set_expect_status(s, "200-"), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "invalid status set"));
  CHECK_STATUS(prober_spec_set_expect_status(s, "abc"), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_set_expect_status(s, NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_expect_body(s, "a(b"), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "invalid regular expression"));
  CHECK_STATUS(prober_spec_set_unhealthy_period_ms(s, 0), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_spec_set_transition_period_ms(s, 0), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_spec_set_jitter_percent(s, 51), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "invalid jitter 51%"));
  CHECK_STATUS(prober_spec_set_expect_body(NULL, "x"), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_jitter_percent(NULL, 1), PROBER_E_NULL);
  prober_spec *tcp = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", t.port, &tcp));
  CHECK_STATUS(prober_spec_set_expect_status(tcp, "200"), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_expect_body(tcp, "x"), PROBER_E_WRONG_KIND);
  prober_spec_free(tcp);

  /* Per-state periods: published Failure runs every 20 ms instead of every minute. */
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new_with_flags(PROBER_ENGINE_EVERY_RUN, &e));
  uint64_t target = 0;
  CHECK_OK(prober_engine_add_target(e, &target));
  target_control(&t, "/control/unhealthy");
  CHECK_OK(prober_spec_set_period_ms(s, 60000));
  CHECK_OK(prober_spec_set_thresholds(s, 1, 1));
  CHECK_OK(prober_spec_set_unhealthy_period_ms(s, 20));
  CHECK_OK(prober_spec_set_transition_period_ms(s, 20));
  CHECK_OK(prober_spec_set_jitter_percent(s, 20));
  CHECK_OK(prober_engine_set_probe(e, target, PROBER_ROLE_READINESS, s));
  prober_spec_free(s);
  run_until_runs(e, 5);
  prober_engine_free(e);
  target_control(&t, "/control/healthy");

  target_stop(&t);
  puts("test_extensions: 1 passed, 0 failed");
  return 0;
}

/* Beyond the kubelet through the C ABI: expected statuses, body expressions, per-state
 * periods and jitter, against the prober-target server. */
#include <pthread.h>

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

/* A one-connection Redis-style peer: reads "PING\r\n", answers "+PONG\r\n", then waits for
 * the probe to close. */
typedef struct {
  int listener;
  char got[16];
} pong_peer;

static void *pong_serve(void *arg) {
  pong_peer *p = arg;
  int c = accept(p->listener, NULL, NULL);
  CHECK(c >= 0);
  size_t n = 0;
  while (n < 6) {
    ssize_t k = read(c, p->got + n, 6 - n);
    if (k <= 0) break;
    n += (size_t)k;
  }
  if (n == 6 && memcmp(p->got, "PING\r\n", 6) == 0) CHECK(write(c, "+PONG\r\n", 7) == 7);
  char buf[16];
  while (read(c, buf, sizeof buf) > 0) {
  }
  close(c);
  return NULL;
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

  /* CEL over a JSON body ({"up":true}, percent-encoded): either mode, and a body that is not
   * JSON failing both. */
  {
    const char *json = "/status/200?body=%7B%22up%22%3Atrue%7D";
    const struct {
      const char *path;
      uint32_t mode;
      prober_result want;
    } cases[] = {
        {json, PROBER_CEL_FAIL_IF_NOT_MATCHES, PROBER_RESULT_SUCCESS},
        {json, PROBER_CEL_FAIL_IF_MATCHES, PROBER_RESULT_FAILURE},
        {"/status/200?body=ready", PROBER_CEL_FAIL_IF_NOT_MATCHES, PROBER_RESULT_FAILURE},
        {"/status/200?body=ready", PROBER_CEL_FAIL_IF_MATCHES, PROBER_RESULT_FAILURE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      char u[256];
      target_url(&t, cases[i].path, u, sizeof u);
      prober_spec *c = NULL;
      CHECK_OK(prober_spec_new_http(u, &c));
      CHECK_OK(prober_spec_set_expect_body_cel(c, cases[i].mode, "body.up == true"));
      CHECK_OK(prober_check(c, &o));
      CHECK(prober_outcome_result(o) == cases[i].want);
      if (cases[i].want == PROBER_RESULT_FAILURE) {
        CHECK(prober_outcome_reason(o) == PROBER_REASON_BODY);
      }
      prober_outcome_free(o);
      prober_spec_free(c);
    }
  }

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
  /* An empty expression would match any body: refused, as on every surface. */
  CHECK_STATUS(prober_spec_set_expect_body(s, ""), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "empty regular expression"));
  CHECK_STATUS(prober_spec_set_unhealthy_period_ms(s, 0), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_spec_set_transition_period_ms(s, 0), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_spec_set_jitter_percent(s, 51), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "invalid jitter 51%"));
  CHECK_STATUS(prober_spec_set_expect_body(NULL, "x"), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_expect_body_cel(s, PROBER_CEL_FAIL_IF_MATCHES, "body.up =="),
               PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "invalid CEL expression"));
  CHECK(str_has(prober_last_error(), "line 1, column"));
  CHECK_STATUS(prober_spec_set_expect_body_cel(s, 2, "true"), PROBER_E_INVALID_ENUM);
  CHECK_STATUS(prober_spec_set_expect_body_cel(s, PROBER_CEL_FAIL_IF_MATCHES, NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_jitter_percent(NULL, 1), PROBER_E_NULL);
  prober_spec *tcp = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", t.port, &tcp));
  CHECK_STATUS(prober_spec_set_expect_status(tcp, "200"), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_expect_body(tcp, "x"), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_expect_body_cel(tcp, PROBER_CEL_FAIL_IF_MATCHES, "true"),
               PROBER_E_WRONG_KIND);
  prober_spec_free(tcp);

  /* TCP send/expect: Redis PING / +PONG against a real listener. */
  {
    pong_peer peer = {0};
    int port = 0;
    peer.listener = listen_loopback(&port);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, pong_serve, &peer) == 0);
    prober_spec *ts = NULL;
    CHECK_OK(prober_spec_new_tcp("127.0.0.1", port, &ts));
    CHECK_OK(prober_spec_set_tcp_send(ts, (const uint8_t *)"PING\r\n", 6));
    CHECK_OK(prober_spec_set_tcp_expect(ts, "^\\+PONG\r\n"));
    CHECK_OK(prober_check(ts, &o));
    CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
    CHECK(str_eq(prober_outcome_output(o), "+PONG\r\n"));
    prober_outcome_free(o);
    CHECK(pthread_join(th, NULL) == 0);
    close(peer.listener);
    /* Bad input: a NULL with a length, too much data, wrong kinds, a bad expression. */
    CHECK_STATUS(prober_spec_set_tcp_send(ts, NULL, 3), PROBER_E_NULL);
    static uint8_t big[10241];
    CHECK_STATUS(prober_spec_set_tcp_send(ts, big, sizeof big), PROBER_E_INVALID);
    CHECK_STATUS(prober_spec_set_tcp_expect(ts, "a(b"), PROBER_E_INVALID);
    CHECK_STATUS(prober_spec_set_tcp_expect(ts, ""), PROBER_E_INVALID);
    CHECK(str_has(prober_last_error(), "empty regular expression"));
    CHECK_OK(prober_spec_set_tcp_send(ts, NULL, 0));
    prober_spec_free(ts);
    CHECK_OK(prober_spec_new_http(url, &ts));
    CHECK_STATUS(prober_spec_set_tcp_send(ts, (const uint8_t *)"x", 1), PROBER_E_WRONG_KIND);
    CHECK_STATUS(prober_spec_set_tcp_expect(ts, "x"), PROBER_E_WRONG_KIND);
    prober_spec_free(ts);
  }

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
  run_until_runs(e, events, MAX_EVENTS, 5, 0);
  prober_engine_free(e);
  target_control(&t, "/control/healthy");

  target_stop(&t);
  puts("test_extensions: 1 passed, 0 failed");
  return 0;
}

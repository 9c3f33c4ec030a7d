/* One-shot checks against the prober-target server and real commands. */
#include "testutil.h"

static prober_outcome *check_spec(prober_spec *s) {
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  CHECK(o != NULL);
  prober_spec_free(s);
  return o;
}

static prober_outcome *check_url(const target_server *t, const char *path, uint32_t timeout_ms) {
  char url[256];
  target_url(t, path, url, sizeof url);
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http(url, &s));
  if (timeout_ms) CHECK_OK(prober_spec_set_timeout_ms(s, timeout_ms));
  return check_spec(s);
}

static prober_outcome *check_cmd(const char *script, uint32_t timeout_ms) {
  const char *argv[] = {"/bin/sh", "-c", script};
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_exec(argv, 3, &s));
  if (timeout_ms) CHECK_OK(prober_spec_set_timeout_ms(s, timeout_ms));
  return check_spec(s);
}

int main(void) {
  target_server t = target_start();
  prober_outcome *o;
  prober_spec *s = NULL;

  /* TCP: success and refused. */
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", t.port, &s));
  o = check_spec(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_timings tm;
  CHECK_OK(prober_outcome_timings(o, &tm));
  CHECK(tm.connect_us >= 0 && tm.resolve_us == -1 && tm.total_us >= tm.connect_us);
  prober_outcome_free(o);
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &s));
  o = check_spec(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_REFUSED);
  CHECK(str_eq(prober_outcome_message(o), "dial tcp 127.0.0.1:1: connect: connection refused"));
  CHECK(prober_outcome_message(o).ptr[prober_outcome_message(o).len] == '\0');
  prober_outcome_free(o);
  CHECK_STATUS(prober_spec_new_tcp("127.0.0.1", 0, &s), PROBER_E_INVALID_PORT);
  CHECK_STATUS(prober_spec_new_tcp("127.0.0.1", 65536, &s), PROBER_E_INVALID_PORT);

  /* HTTP: success with body, warning, failure, timeout, truncation. */
  o = check_url(&t, "/status/200?body=hello", 0);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(str_eq(prober_outcome_output(o), "hello"));
  CHECK(prober_outcome_http_status(o) == 200);
  prober_outcome_free(o);
  o = check_url(&t, "/no-location/302?body=moved", 0);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_WARNING);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_REDIRECT);
  CHECK(str_eq(prober_outcome_message(o), "Probe terminated redirects, Response body: moved"));
  prober_outcome_free(o);
  o = check_url(&t, "/status/503?body=secret", 0);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(str_eq(prober_outcome_message(o), "HTTP probe failed with statuscode: 503"));
  CHECK(prober_outcome_reason(o) == PROBER_REASON_STATUS);
  prober_outcome_free(o);
  o = check_url(&t, "/slow-headers/3000", 200);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_TIMEOUT);
  prober_outcome_free(o);
  o = check_url(&t, "/body/20000", 0);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(prober_outcome_output(o).len == 10240);
  CHECK(prober_outcome_truncated(o));
  prober_outcome_free(o);

  /* Headers: removal and override reach the wire. */
  char url[256];
  target_url(&t, "/echo/headers", url, sizeof url);
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_add_header(s, "User-Agent", ""));
  CHECK_OK(prober_spec_add_header(s, "X-Test", "c-suite"));
  CHECK_STATUS(prober_spec_add_header(s, "X-Bad", "a\r\nInjected: 1"), PROBER_E_INVALID_HEADER);
  CHECK_OK(prober_spec_set_redirect_policy(s, PROBER_REDIRECT_NONE));
  CHECK_STATUS(prober_spec_set_redirect_policy(s, 7), PROBER_E_INVALID_ENUM);
  CHECK_STATUS(prober_spec_set_env(s, "A", "b"), PROBER_E_WRONG_KIND);
  o = check_spec(s);
  CHECK(!str_has(prober_outcome_output(o), "User-Agent"));
  CHECK(str_has(prober_outcome_output(o), "X-Test: c-suite"));
  prober_outcome_free(o);

  /* Exec: success, failure with exit code, timeout, truncation, could not start, env. */
  o = check_cmd("printf ok", 0);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS && str_eq(prober_outcome_output(o), "ok"));
  CHECK(prober_outcome_exit_code(o) == 0);
  prober_outcome_free(o);
  o = check_cmd("echo Fail; exit 3", 0);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_EXIT_CODE && prober_outcome_exit_code(o) == 3);
  CHECK(str_eq(prober_outcome_message(o), "command terminated with exit code 3"));
  CHECK(str_eq(prober_outcome_output(o), "Fail\n"));
  prober_outcome_free(o);
  o = check_cmd("exec sleep 10", 150);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE && prober_outcome_reason(o) == PROBER_REASON_TIMEOUT);
  CHECK(str_eq(prober_outcome_message(o), "command timed out: \"/bin/sh -c exec sleep 10\" timed out after 150ms"));
  prober_outcome_free(o);
  o = check_cmd("head -c 50000 /dev/zero", 0);
  CHECK(prober_outcome_output(o).len == 10240 && prober_outcome_truncated(o));
  CHECK(prober_outcome_output_total(o) == 50000);
  prober_outcome_free(o);
  const char *missing[] = {"/no/such/binary"};
  CHECK_OK(prober_spec_new_exec(missing, 1, &s));
  o = check_spec(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_UNKNOWN && prober_outcome_reason(o) == PROBER_REASON_SPAWN);
  CHECK(str_has(prober_outcome_message(o), "no such file or directory"));
  prober_outcome_free(o);
  const char *echo[] = {"/bin/sh", "-c", "echo $(GREETING) $$HOME_IS_KEPT"};
  CHECK_OK(prober_spec_new_exec(echo, 3, &s));
  CHECK_OK(prober_spec_set_env(s, "GREETING", "hi"));
  CHECK_STATUS(prober_spec_set_env(s, "BAD=NAME", "x"), PROBER_E_INVALID_ENV);
  CHECK_STATUS(prober_spec_add_header(s, "A", "b"), PROBER_E_WRONG_KIND);
  o = check_spec(s);
  CHECK(str_eq(prober_outcome_output(o), "hi\n"));
  prober_outcome_free(o);
  /* The command's environment is a container's: values see the variables set before them. */
  const char *show[] = {"/bin/sh", "-c", "printf '%s|%s' \"$A\" \"$C\""};
  CHECK_OK(prober_spec_new_exec(show, 3, &s));
  CHECK_OK(prober_spec_set_env(s, "B", "x"));
  CHECK_OK(prober_spec_set_env(s, "A", "$(B)y"));
  CHECK_OK(prober_spec_set_env(s, "C", "$$(B)"));
  o = check_spec(s);
  CHECK(str_eq(prober_outcome_output(o), "xy|$(B)"));
  prober_outcome_free(o);

  /* Setters refuse bad values at once. */
  CHECK_OK(prober_spec_new_tcp("::1", 80, &s));
  CHECK_STATUS(prober_spec_set_timeout_ms(s, 0), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_spec_set_period_ms(s, 0), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_spec_set_thresholds(s, 0, 3), PROBER_E_INVALID_THRESHOLD);
  CHECK_STATUS(prober_spec_set_thresholds(s, 1, 0), PROBER_E_INVALID_THRESHOLD);
  CHECK_STATUS(prober_spec_set_output_limit(s, 0), PROBER_E_INVALID);
  prober_spec_free(s);
  CHECK_STATUS(prober_spec_new_http("ftp://x/", &s), PROBER_E_INVALID_URL);
  CHECK(str_has(prober_last_error(), "unsupported URL scheme"));

  target_stop(&t);
  puts("test_check: 1 passed, 0 failed");
  return 0;
}

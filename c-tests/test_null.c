/* Every entry point with NULL arguments: a status (or the neutral value), never a crash. */
#include "testutil.h"

int main(void) {
  prober_spec *spec = NULL;
  prober_outcome *out = NULL;
  prober_engine *e = NULL;
  uint64_t id = 0;
  uint32_t r = 0;

  /* Specs. */
  CHECK_STATUS(prober_spec_new_tcp(NULL, 80, &spec), PROBER_E_NULL);
  CHECK(str_has(prober_last_error(), "host is NULL"));
  CHECK_STATUS(prober_spec_new_tcp("127.0.0.1", 80, NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_http(NULL, &spec), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_http("http://127.0.0.1:1/", NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_exec(NULL, 1, &spec), PROBER_E_NULL);
  const char *argv_with_null[] = {"/bin/true", NULL};
  CHECK_STATUS(prober_spec_new_exec(argv_with_null, 2, &spec), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_exec(argv_with_null, 1, NULL), PROBER_E_NULL);
  CHECK(spec == NULL); /* out-parameters are written only on success */
  CHECK_STATUS(prober_spec_clone(NULL, &spec), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_timeout_ms(NULL, 10), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_period_ms(NULL, 10), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_initial_delay_ms(NULL, 10), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_thresholds(NULL, 1, 1), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_jitter(NULL, true), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_output_limit(NULL, 10), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_add_header(NULL, "A", "b"), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_env(NULL, "A", "b"), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_workdir(NULL, "/"), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_redirect_policy(NULL, PROBER_REDIRECT_NONE), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_close_policy(NULL, PROBER_CLOSE_FIN), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_grpc(NULL, 80, "", &spec), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_grpc("127.0.0.1", 80, NULL, &spec), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_grpc("127.0.0.1", 80, "", NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_enable_tls(NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_tls_verify(NULL, PROBER_TLS_VERIFY_NONE, NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_tls_server_name(NULL, "a"), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_tls_client_cert(NULL, "a", "b"), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_tls_min_version(NULL, 12), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_tls_resumption(NULL, true), PROBER_E_NULL);
  prober_spec_free(NULL);

  CHECK_OK(prober_spec_new_http("http://127.0.0.1:1/", &spec));
  CHECK_STATUS(prober_spec_set_tls_server_name(spec, NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_tls_client_cert(spec, "a", NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_tls_client_cert(spec, NULL, "b"), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_add_header(spec, NULL, "b"), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_add_header(spec, "A", NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_clone(spec, NULL), PROBER_E_NULL);

  /* One-shot and outcomes. */
  CHECK_STATUS(prober_check(NULL, &out), PROBER_E_NULL);
  CHECK_STATUS(prober_check(spec, NULL), PROBER_E_NULL);
  CHECK(out == NULL);
  CHECK(prober_outcome_result(NULL) == PROBER_RESULT_UNKNOWN);
  CHECK(prober_outcome_reason(NULL) == PROBER_REASON_NONE);
  CHECK(prober_outcome_message(NULL).len == 0 && prober_outcome_message(NULL).ptr != NULL);
  CHECK(prober_outcome_output(NULL).len == 0);
  CHECK(!prober_outcome_truncated(NULL));
  CHECK(prober_outcome_output_total(NULL) == 0);
  CHECK(prober_outcome_duration_us(NULL) == 0);
  CHECK(prober_outcome_http_status(NULL) == 0);
  CHECK(prober_outcome_http_version(NULL) == 0);
  CHECK(prober_outcome_tls_version(NULL) == 0);
  CHECK(prober_outcome_grpc_status(NULL) == -1);
  CHECK(prober_outcome_grpc_serving_status(NULL) == -1);
  CHECK(prober_outcome_exit_code(NULL) == -1);
  prober_timings t;
  CHECK_STATUS(prober_outcome_timings(NULL, &t), PROBER_E_NULL);
  int64_t not_after = 0;
  CHECK(!prober_outcome_cert_not_after(NULL, &not_after));
  prober_outcome_free(NULL);

  /* Engines. */
  CHECK_STATUS(prober_engine_new(NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_new_with_flags(0, NULL), PROBER_E_NULL);
  prober_engine_free(NULL);
  CHECK_STATUS(prober_engine_add_target(NULL, &id), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_set_probe(NULL, 1, PROBER_ROLE_LIVENESS, spec), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_clear_probe(NULL, 1, PROBER_ROLE_LIVENESS), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_restart_target(NULL, 1), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_remove_target(NULL, 1), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_trigger(NULL, 1, PROBER_ROLE_LIVENESS), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_submit(NULL, spec, 1), PROBER_E_NULL);
  CHECK(prober_engine_fd(NULL) == -1);
  CHECK(prober_engine_timeout_ms(NULL) == -1);
  CHECK_STATUS(prober_engine_step(NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_wait(NULL, 0), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_wakeup(NULL), PROBER_E_NULL);
  prober_event evs[4];
  CHECK(prober_engine_drain(NULL, evs, 4) == 0);
  CHECK(prober_engine_pending(NULL) == 0);
  CHECK(prober_engine_in_flight(NULL) == 0);
  CHECK_STATUS(prober_engine_published(NULL, 1, PROBER_ROLE_LIVENESS, &r), PROBER_E_NULL);

  CHECK_OK(prober_engine_new(&e));
  CHECK_STATUS(prober_engine_add_target(e, NULL), PROBER_E_NULL);
  CHECK_OK(prober_engine_add_target(e, &id));
  CHECK(id != 0);
  CHECK_STATUS(prober_engine_set_probe(e, id, PROBER_ROLE_LIVENESS, NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_submit(e, NULL, 1), PROBER_E_NULL);
  CHECK(prober_engine_drain(e, NULL, 4) == 0);
  CHECK_STATUS(prober_engine_published(e, id, PROBER_ROLE_LIVENESS, NULL), PROBER_E_NULL);
  prober_engine_free(e);
  prober_spec_free(spec);
  e = NULL;
  spec = NULL;

  /* Absurd values. */
  CHECK_STATUS(prober_spec_new_exec(argv_with_null, 0, &spec), PROBER_E_INVALID_ARGV);
  CHECK_STATUS(prober_spec_new_exec(argv_with_null, (size_t)1 << 40, &spec), PROBER_E_INVALID_ARGV);
  const char bad_utf8[] = {(char)0xff, (char)0xfe, 0};
  CHECK_STATUS(prober_spec_new_http(bad_utf8, &spec), PROBER_E_INVALID_UTF8);
  CHECK_STATUS(prober_spec_new_tcp(bad_utf8, 80, &spec), PROBER_E_INVALID_UTF8);
  CHECK_STATUS(prober_engine_new_with_flags(0x80, &e), PROBER_E_INVALID);
  CHECK(spec == NULL && e == NULL);
  puts("test_null: 1 passed, 0 failed");
  return 0;
}

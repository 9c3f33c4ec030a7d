/* gRPC and TLS surfaces: constructors, setters, and failures against plain servers. */
#include "testutil.h"

int main(void) {
  target_server t = target_start();
  prober_spec *s = NULL;
  prober_outcome *o = NULL;
  char url[256];

  /* HTTPS against the plain HTTP server: it waits for a request head that a ClientHello never
     completes, so the handshake runs into the deadline; no certificate was seen. */
  snprintf(url, sizeof url, "https://127.0.0.1:%d/ok", t.port);
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_tls_verify(s, PROBER_TLS_VERIFY_SYSTEM, NULL));
  CHECK_OK(prober_spec_set_tls_server_name(s, "example.test"));
  CHECK_OK(prober_spec_set_tls_min_version(s, 13));
  CHECK_STATUS(prober_spec_set_tls_min_version(s, 11), PROBER_E_INVALID_TLS);
  CHECK_STATUS(prober_spec_set_tls_max_version(s, 14), PROBER_E_INVALID_TLS);
  /* The minimum is 1.3: a maximum of 1.2 is refused with both versions named. */
  CHECK_STATUS(prober_spec_set_tls_max_version(s, 12), PROBER_E_INVALID_TLS);
  CHECK(str_has(prober_last_error(), "minimum TLS version 1.3 is above the maximum 1.2"));
  CHECK_OK(prober_spec_set_tls_max_version(s, 13));
  /* Resumption (off by default) is one more TLS option; prober_check resumes nothing. */
  CHECK_OK(prober_spec_set_tls_resumption(s, true));
  CHECK_STATUS(prober_spec_set_tls_verify(s, 9, NULL), PROBER_E_INVALID_ENUM);
  CHECK_STATUS(prober_spec_set_tls_verify(s, PROBER_TLS_VERIFY_CA_FILE, NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_tls_server_name(s, "bad name!"), PROBER_E_INVALID_TLS);
  CHECK_OK(prober_spec_set_timeout_ms(s, 300));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_TIMEOUT);
  int64_t not_after = 0;
  CHECK(!prober_outcome_cert_not_after(o, &not_after));
  prober_outcome_free(o);
  prober_spec_free(s);

  /* A missing CA file: the run is Unknown with the file named. */
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_tls_verify(s, PROBER_TLS_VERIFY_CA_FILE, "/no/such/ca.pem"));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_UNKNOWN);
  CHECK(str_has(prober_outcome_message(o), "/no/such/ca.pem"));
  prober_outcome_free(o);
  prober_spec_free(s);

  /* TLS setters refuse exec probes (TCP takes them since issue 25: see test_tcp_tls.c). */
  const char *argv[] = {"true"};
  CHECK_OK(prober_spec_new_exec(argv, 1, &s));
  CHECK_STATUS(prober_spec_enable_tls(s), PROBER_E_WRONG_KIND);
  prober_spec_free(s);

  /* gRPC: a plain HTTP/1 server on the port fails; a closed port fails with the kubelet's words. */
  CHECK_STATUS(prober_spec_new_grpc("127.0.0.1", 0, "", &s), PROBER_E_INVALID_PORT);
  CHECK_STATUS(prober_spec_new_grpc("127.0.0.1", 1, NULL, &s), PROBER_E_NULL);
  CHECK_OK(prober_spec_new_grpc("127.0.0.1", t.port, "", &s));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  prober_outcome_free(o);
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_grpc("127.0.0.1", 1, "svc", &s));
  CHECK_OK(prober_spec_enable_tls(s));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(str_has(prober_outcome_message(o), "error: failed to connect service at \"127.0.0.1:1\""));
  /* grpc-go's code for a connection that failed: Unavailable; no health response, no TLS. */
  CHECK(prober_outcome_grpc_status(o) == 14);
  CHECK(prober_outcome_grpc_serving_status(o) == -1);
  CHECK(prober_outcome_tls_version(o) == 0);
  prober_outcome_free(o);
  prober_spec_free(s);

  target_stop(&t);
  puts("test_tls_grpc: 1 passed, 0 failed");
  return 0;
}

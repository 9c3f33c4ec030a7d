/* HTTP versions (prober_spec_set_http_version): the setter's checks, HTTP/1.1 by default on
   http://, and h2c with prior knowledge, which an HTTP/1.1-only server answers with HTTP/1. */
#include "testutil.h"

int main(void) {
  target_server t = target_start();
  prober_spec *s = NULL;
  prober_outcome *o = NULL;
  char url[256];

  target_url(&t, "/ok", url, sizeof url);
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_STATUS(prober_spec_set_http_version(NULL, PROBER_HTTP_VERSION_AUTO), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_http_version(s, 3), PROBER_E_INVALID_ENUM);
  CHECK(str_has(prober_last_error(), "3 is not a PROBER_HTTP_VERSION_* value"));
  CHECK_OK(prober_spec_set_http_version(s, PROBER_HTTP_VERSION_HTTP1));
  CHECK_OK(prober_spec_set_http_version(s, PROBER_HTTP_VERSION_AUTO));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  /* The response's version: 11 for HTTP/1.1 (20 for HTTP/2); no TLS, no gRPC. */
  CHECK(prober_outcome_http_version(o) == 11);
  CHECK(prober_outcome_tls_version(o) == 0);
  CHECK(prober_outcome_grpc_status(o) == -1);
  prober_outcome_free(o);

  /* h2c: the HTTP/1.1 server does not speak HTTP/2, and the message says so. */
  CHECK_OK(prober_spec_set_http_version(s, PROBER_HTTP_VERSION_H2C));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_PROTOCOL);
  CHECK(str_has(prober_outcome_message(o), "frame header looked like an HTTP/1.1 header"));
  CHECK(prober_outcome_http_version(o) == 0); /* no HTTP/2 response came */
  prober_outcome_free(o);
  prober_spec_free(s);

  /* h2c is cleartext only; other kinds refuse the setter. */
  CHECK_OK(prober_spec_new_http("https://127.0.0.1:1/", &s));
  CHECK_STATUS(prober_spec_set_http_version(s, PROBER_HTTP_VERSION_H2C), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "h2c"));
  CHECK_OK(prober_spec_set_http_version(s, PROBER_HTTP_VERSION_HTTP1));
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &s));
  CHECK_STATUS(prober_spec_set_http_version(s, PROBER_HTTP_VERSION_AUTO), PROBER_E_WRONG_KIND);
  prober_spec_free(s);

  target_stop(&t);
  return 0;
}

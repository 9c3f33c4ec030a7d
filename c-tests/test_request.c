/* Requests beyond the kubelet through the C ABI (issue 25): HTTP methods and bodies, against
 * the prober-target server, which echoes the method and body it received. */
#include "testutil.h"

static prober_outcome *request(const target_server *t, const char *path, const char *method,
                               const char *body) {
  char url[256];
  target_url(t, path, url, sizeof url);
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_method(s, method));
  CHECK_OK(prober_spec_set_body(s, (const uint8_t *)body, strlen(body)));
  CHECK_OK(prober_spec_add_header(s, "Content-Type", "application/json"));
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  prober_spec_free(s);
  return o;
}

int main(void) {
  target_server t = target_start();
  prober_outcome *o;

  o = request(&t, "/echo/request", "POST", "{\"ping\":1}");
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(str_eq(prober_outcome_output(o), "POST 10\n{\"ping\":1}"));
  prober_outcome_free(o);

  /* 307 keeps the method and body, 303 makes a GET without body (Go's client). */
  o = request(&t, "/redirect?code=307&loc=/echo/request", "PUT", "x");
  CHECK(str_eq(prober_outcome_output(o), "PUT 1\nx"));
  prober_outcome_free(o);
  o = request(&t, "/redirect?code=303&loc=/echo/request", "PUT", "x");
  CHECK(str_eq(prober_outcome_output(o), "GET 0\n"));
  prober_outcome_free(o);

  /* HEAD reads no body although the head announces 100000 bytes. */
  o = request(&t, "/body/100000", "HEAD", "");
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(prober_outcome_output(o).len == 0);
  prober_outcome_free(o);

  /* Bad input. */
  char url[256];
  target_url(&t, "/", url, sizeof url);
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_STATUS(prober_spec_set_method(s, "GET /"), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "invalid HTTP method"));
  CHECK_STATUS(prober_spec_set_method(s, NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_body(s, NULL, 3), PROBER_E_NULL);
  CHECK_OK(prober_spec_set_body(s, NULL, 0));
  static uint8_t big[65537];
  CHECK_STATUS(prober_spec_set_body(s, big, sizeof big), PROBER_E_INVALID);
  CHECK_OK(prober_spec_set_body(s, big, sizeof big - 1));
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &s));
  CHECK_STATUS(prober_spec_set_method(s, "POST"), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_body(s, (const uint8_t *)"x", 1), PROBER_E_WRONG_KIND);
  prober_spec_free(s);
  CHECK_STATUS(prober_spec_set_method(NULL, "POST"), PROBER_E_NULL);

  /* gRPC metadata, user agent and authority: validated as gRPC requires (the behaviour is
   * tested against grpc-go in prober-grpc's and the command's suites). */
  CHECK_OK(prober_spec_new_grpc("127.0.0.1", 50051, "", &s));
  CHECK_OK(prober_spec_add_grpc_metadata(s, "Authorization", "Bearer x"));
  CHECK_OK(prober_spec_add_grpc_metadata(s, "trace-bin", "aGVsbG8"));
  CHECK_STATUS(prober_spec_add_grpc_metadata(s, "trace-bin", "not base64!"), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "a -bin key takes a base64 value"));
  CHECK_STATUS(prober_spec_add_grpc_metadata(s, "grpc-status", "0"), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_add_grpc_metadata(s, "a b", "v"), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_add_grpc_metadata(s, "k", "a\r\nb"), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_add_grpc_metadata(s, NULL, "v"), PROBER_E_NULL);
  CHECK_OK(prober_spec_set_grpc_user_agent(s, "grpc_health_probe"));
  CHECK_STATUS(prober_spec_set_grpc_user_agent(s, ""), PROBER_E_INVALID);
  CHECK_OK(prober_spec_set_grpc_authority(s, "svc.example:443"));
  CHECK_STATUS(prober_spec_set_grpc_authority(s, "a/b"), PROBER_E_INVALID);
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_STATUS(prober_spec_add_grpc_metadata(s, "k", "v"), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_grpc_user_agent(s, "x"), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_grpc_authority(s, "x"), PROBER_E_WRONG_KIND);
  prober_spec_free(s);

  target_stop(&t);
  return 0;
}

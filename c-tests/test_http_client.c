/* The redirect limit (prober_spec_set_max_redirects), the run's cookie jar
   (prober_spec_set_cookies) and the body's content coding (prober_spec_set_compression): the
   kubelet's 9 redirects, no jar and no decoding by default. */
#include "testutil.h"

int main(void) {
  target_server t = target_start();
  prober_spec *s = NULL;
  prober_outcome *o = NULL;
  char url[512];

  target_url(&t, "/redirect-chain/10", url, sizeof url);
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_STATUS(prober_spec_set_max_redirects(NULL, 10), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_max_redirects(s, 65), PROBER_E_INVALID);
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_reason(o) == PROBER_REASON_TOO_MANY_REDIRECTS);
  prober_outcome_free(o);
  CHECK_OK(prober_spec_set_max_redirects(s, 10));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(str_has(prober_outcome_output(o), "chain end"));
  prober_outcome_free(o);
  prober_spec_free(s);

  /* A login that sets a cookie on its redirect; the next page echoes the request's headers. */
  target_url(&t,
             "/bytes?status=302&header=Set-Cookie:session%3Dabc%3B%20Path%3D/"
             "&header=Location:/echo/headers",
             url, sizeof url);
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_check(s, &o));
  CHECK(!str_has(prober_outcome_output(o), "\nCookie:"));
  prober_outcome_free(o);
  CHECK_STATUS(prober_spec_set_cookies(NULL, true), PROBER_E_NULL);
  CHECK_OK(prober_spec_set_cookies(s, true));
  CHECK_OK(prober_check(s, &o));
  CHECK(str_has(prober_outcome_output(o), "\nCookie: session=abc\n"));
  prober_outcome_free(o);
  prober_spec_free(s);

  /* 3000 bytes of 'a' in gzip: the coded bytes by default, the decoded ones when asked. */
  target_url(&t, "/encoded/gzip/3000", url, sizeof url);
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_output(o).len != 3000);
  prober_outcome_free(o);
  CHECK_STATUS(prober_spec_set_compression(NULL, PROBER_COMPRESSION_GZIP), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_compression(s, 5), PROBER_E_INVALID_ENUM);
  CHECK_OK(prober_spec_set_compression(s, PROBER_COMPRESSION_GZIP));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(prober_outcome_output(o).len == 3000);
  prober_outcome_free(o);
  CHECK_OK(prober_spec_set_compression(s, PROBER_COMPRESSION_DEFLATE));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_reason(o) == PROBER_REASON_BROKEN_BODY);
  prober_outcome_free(o);
  prober_spec_free(s);

  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &s));
  CHECK_STATUS(prober_spec_set_max_redirects(s, 1), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_cookies(s, true), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_compression(s, PROBER_COMPRESSION_GZIP), PROBER_E_WRONG_KIND);
  prober_spec_free(s);

  target_stop(&t);
  return 0;
}

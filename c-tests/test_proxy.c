/* HTTP probes through a proxy (prober_spec_set_proxy, _set_no_proxy,
   _add_proxy_connect_header). The target server plays the proxy for http:// (it reads an
   absolute-form request as its path) and refuses a CONNECT with a 4xx; the proxy suites against
   tinyproxy are prober-http's tests/proxy.rs. */
#include "testutil.h"

int main(void) {
  target_server t = target_start();
  prober_spec *s = NULL;
  prober_outcome *o = NULL;
  char proxy[128];
  snprintf(proxy, sizeof proxy, "http://u:pw@127.0.0.1:%d", t.port);

  /* A name that does not resolve: only the proxy can reach it, in absolute form. */
  CHECK_OK(prober_spec_new_http("http://example.invalid/echo/headers", &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_STATUS(prober_spec_set_proxy(NULL, proxy), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_no_proxy(s, "x"), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_set_proxy(s, "socks5://u:secret@h:1"), PROBER_E_INVALID);
  CHECK(!str_has(prober_last_error(), "secret"));
  CHECK_OK(prober_spec_set_proxy(s, proxy));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(str_has(prober_outcome_output(o), "Host: example.invalid\n"));
  CHECK(str_has(prober_outcome_output(o), "Proxy-Authorization: Basic dTpwdw==\n"));
  prober_outcome_free(o);
  prober_spec_free(s);

  /* A proxy that is down fails in Go's words; NULL goes straight to the target again. */
  char url[512];
  target_url(&t, "/ok", url, sizeof url);
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_spec_set_proxy(s, "127.0.0.1:1"));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_reason(o) == PROBER_REASON_REFUSED);
  CHECK(str_has(prober_outcome_message(o), "proxyconnect tcp: dial tcp 127.0.0.1:1"));
  prober_outcome_free(o);
  CHECK_OK(prober_spec_set_proxy(s, NULL));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);
  prober_spec_free(s);

  /* https:// asks for a tunnel; the server's refusal names the proxy and its status. */
  CHECK_OK(prober_spec_new_http("https://example.invalid/", &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_spec_set_proxy(s, proxy));
  CHECK_STATUS(prober_spec_add_proxy_connect_header(s, "Bad Name", "v"), PROBER_E_INVALID_HEADER);
  CHECK_OK(prober_spec_add_proxy_connect_header(s, "X-Tenant", "blue"));
  CHECK_OK(prober_spec_set_no_proxy(s, "other.example"));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_reason(o) == PROBER_REASON_STATUS);
  CHECK(str_has(prober_outcome_message(o), "answered CONNECT with status"));
  CHECK(!str_has(prober_outcome_message(o), "pw"));
  prober_outcome_free(o);
  prober_spec_free(s);

  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &s));
  CHECK_STATUS(prober_spec_set_proxy(s, proxy), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_no_proxy(s, "x"), PROBER_E_WRONG_KIND);
  prober_spec_free(s);

  target_stop(&t);
  return 0;
}

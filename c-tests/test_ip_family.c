/* Address families (prober_spec_set_ip_family): the setter's checks, and a TCP probe of an
   IPv4 literal under each family against a real listener on 127.0.0.1. */
#include "testutil.h"

/* A TCP probe of 127.0.0.1:port under `family`; returns its outcome. */
static prober_outcome *probe(int port, uint32_t family) {
  prober_spec *s = NULL;
  prober_outcome *o = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", port, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_spec_set_ip_family(s, family));
  CHECK_OK(prober_check(s, &o));
  prober_spec_free(s);
  return o;
}

int main(void) {
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http("http://127.0.0.1:1/", &s));
  CHECK_STATUS(prober_spec_set_ip_family(NULL, PROBER_IP_FAMILY_V4), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_ip_family(s, 5), PROBER_E_INVALID_ENUM);
  CHECK(str_has(prober_last_error(), "5 is not a PROBER_IP_FAMILY_* value"));
  CHECK_STATUS(prober_spec_set_ip_family(s, UINT32_MAX), PROBER_E_INVALID_ENUM);
  CHECK_OK(prober_spec_set_ip_family(s, PROBER_IP_FAMILY_PREFER_V6));
  prober_spec_free(s);
  const char *argv[] = {"true"};
  CHECK_OK(prober_spec_new_exec(argv, 1, &s));
  CHECK_STATUS(prober_spec_set_ip_family(s, PROBER_IP_FAMILY_V4), PROBER_E_WRONG_KIND);
  CHECK(str_has(prober_last_error(), "applies to TCP, HTTP, gRPC, DNS and ICMP probes only"));
  /* An invalid value is reported as such even on a probe of the wrong kind. */
  CHECK_STATUS(prober_spec_set_ip_family(s, 5), PROBER_E_INVALID_ENUM);
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_grpc("127.0.0.1", 1, "", &s));
  CHECK_OK(prober_spec_set_ip_family(s, PROBER_IP_FAMILY_V6));
  prober_spec_free(s);

  int port = 0;
  int l = listen_loopback(&port);
  const uint32_t reach[] = {PROBER_IP_FAMILY_ANY, PROBER_IP_FAMILY_V4,
                            PROBER_IP_FAMILY_PREFER_V4, PROBER_IP_FAMILY_PREFER_V6};
  for (size_t i = 0; i < sizeof reach / sizeof reach[0]; i++) {
    prober_outcome *o = probe(port, reach[i]);
    CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
    prober_outcome_free(o);
  }
  /* IPv6 only: the IPv4 literal is refused before anything is connected to. */
  prober_outcome *o = probe(port, PROBER_IP_FAMILY_V6);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_DNS);
  CHECK(str_has(prober_outcome_message(o), "127.0.0.1 is an IPv4 address (only IPv6 was asked for)"));
  prober_outcome_free(o);
  close(l);
  return 0;
}

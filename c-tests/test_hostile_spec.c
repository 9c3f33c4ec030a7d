/* Hostile hosts through the C surface: a host that is not a host (a path, query, fragment,
   user information, a port, spaces, non-ASCII) is PROBER_E_INVALID_HOST, and a Host header
   value that is not host[:port] is PROBER_E_INVALID_HEADER; nothing is created or changed. */
#include "testutil.h"

static const char *const bad_hosts[] = {
    "127.0.0.1/x", "a?b", "a#b", "a b", "a\tb", "user@evil", "h:80", "[::1]:80", "a..b",
    "caf\xc3\xa9", "\xe2\x80\xae" "evil", "127.1", "",
};

static const char *const bad_host_headers[] = {
    "a b", "a\tb", "evil/x?y#z", "user@evil", "caf\xc3\xa9.example", "h:0", "h:x", "[::1",
};

int main(void) {
  prober_spec *spec = NULL;
  for (size_t i = 0; i < sizeof bad_hosts / sizeof bad_hosts[0]; i++) {
    CHECK_STATUS(prober_spec_new_tcp(bad_hosts[i], 8080, &spec), PROBER_E_INVALID_HOST);
    CHECK(str_has(prober_last_error(), "invalid host"));
    if (bad_hosts[i][0] == '\0') {
      /* gRPC: an empty host is the local machine, as the kubelet's ":PORT". */
      CHECK_OK(prober_spec_new_grpc(bad_hosts[i], 8080, "", &spec));
      prober_spec_free(spec);
      spec = NULL;
      continue;
    }
    CHECK_STATUS(prober_spec_new_grpc(bad_hosts[i], 8080, "", &spec), PROBER_E_INVALID_HOST);
    CHECK(spec == NULL);
  }
  CHECK_STATUS(prober_spec_new_tcp("127.0.0.1/x", 8080, &spec), PROBER_E_INVALID_HOST);
  CHECK(str_eq(prober_last_error(),
               "invalid host \"127.0.0.1/x\" (expected a host name or an IP address)"));

  const char *good_hosts[] = {"localhost", "127.0.0.1", "::1", "[::1]", "svc.ns.svc.cluster.local."};
  for (size_t i = 0; i < sizeof good_hosts / sizeof good_hosts[0]; i++) {
    CHECK_OK(prober_spec_new_tcp(good_hosts[i], 8080, &spec));
    prober_spec_free(spec);
    spec = NULL;
  }

  CHECK_OK(prober_spec_new_http("http://127.0.0.1:8080/", &spec));
  for (size_t i = 0; i < sizeof bad_host_headers / sizeof bad_host_headers[0]; i++) {
    CHECK_STATUS(prober_spec_add_header(spec, "Host", bad_host_headers[i]), PROBER_E_INVALID_HEADER);
    CHECK(str_has(prober_last_error(), "for HTTP header \"Host\""));
    CHECK_STATUS(prober_spec_add_header(spec, "host", bad_host_headers[i]), PROBER_E_INVALID_HEADER);
  }
  CHECK_STATUS(prober_spec_add_header(spec, "Host", "a b"), PROBER_E_INVALID_HEADER);
  CHECK(str_eq(prober_last_error(),
               "invalid value \"a b\" for HTTP header \"Host\" (expected a host name or IP address "
               "with an optional :port)"));
  CHECK_OK(prober_spec_add_header(spec, "Host", "vhost.example:8443"));
  CHECK_OK(prober_spec_add_header(spec, "Host", "[::1]:8080"));
  CHECK_OK(prober_spec_add_header(spec, "X-Other", "a b")); /* other headers keep their rules */
  prober_spec_free(spec);
  printf("ok\n");
  return 0;
}

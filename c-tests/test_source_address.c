/* Source addresses (prober_spec_set_source_address): the setter's checks, a TCP probe bound to
   127.0.0.2 (all of 127/8 is this host's on Linux) seen from 127.0.0.2 by a real listener on
   127.0.0.1, an address the host does not have (192.0.2.1) and one of the other family; a DNS
   query from 127.0.0.3 seen by a UDP socket on 127.0.0.1. */
#include "testutil.h"

/* A TCP probe of 127.0.0.1:port from `source` (NULL: none); returns its outcome. */
static prober_outcome *probe(int port, const char *source) {
  prober_spec *s = NULL;
  prober_outcome *o = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", port, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_spec_set_source_address(s, source));
  CHECK_OK(prober_check(s, &o));
  prober_spec_free(s);
  return o;
}

/* A DNS query (UDP) from 127.0.0.3 to a socket on 127.0.0.1 that never answers (the run ends
   at its deadline): the query queued there comes from 127.0.0.3. */
static void dns_query_from_source(void) {
  int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  CHECK(u >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
  socklen_t len = sizeof a;
  CHECK(bind(u, (struct sockaddr *)&a, sizeof a) == 0);
  CHECK(getsockname(u, (struct sockaddr *)&a, &len) == 0);
  prober_spec *s = NULL;
  prober_outcome *o = NULL;
  CHECK_OK(prober_spec_new_dns("127.0.0.1", ntohs(a.sin_port), "probe.test", &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 500));
  CHECK_OK(prober_spec_set_source_address(s, "127.0.0.3"));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  prober_outcome_free(o);
  prober_spec_free(s);
  unsigned char query[512];
  struct sockaddr_in peer;
  len = sizeof peer;
  CHECK(recvfrom(u, query, sizeof query, MSG_DONTWAIT, (struct sockaddr *)&peer, &len) > 12);
  CHECK(ntohl(peer.sin_addr.s_addr) == 0x7f000003);
  close(u);
}

/* The address the next connection queued on `l` comes from (the probe has connected already:
   accept does not wait). */
static uint32_t accepted_from(int l) {
  struct sockaddr_in peer;
  socklen_t len = sizeof peer;
  int c = accept(l, (struct sockaddr *)&peer, &len);
  CHECK(c >= 0 && peer.sin_family == AF_INET);
  close(c);
  return ntohl(peer.sin_addr.s_addr);
}

int main(void) {
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http("http://127.0.0.1:1/", &s));
  CHECK_STATUS(prober_spec_set_source_address(NULL, "127.0.0.2"), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_source_address(s, "127.0.0.2:80"), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "\"127.0.0.2:80\" is not an IP address"));
  CHECK_STATUS(prober_spec_set_source_address(s, "[::1]"), PROBER_E_INVALID);
  CHECK_OK(prober_spec_set_source_address(s, "::1"));
  CHECK_OK(prober_spec_set_source_address(s, NULL));
  prober_spec_free(s);
  const char *argv[] = {"true"};
  CHECK_OK(prober_spec_new_exec(argv, 1, &s));
  CHECK_STATUS(prober_spec_set_source_address(s, "127.0.0.2"), PROBER_E_WRONG_KIND);
  CHECK(str_has(prober_last_error(), "applies to TCP, HTTP, gRPC, DNS and ICMP probes only"));
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_grpc("127.0.0.1", 1, "", &s));
  CHECK_OK(prober_spec_set_source_address(s, "127.0.0.2"));
  prober_spec_free(s);

  int port = 0;
  int l = listen_loopback(&port);
  prober_outcome *o = probe(port, "127.0.0.2");
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);
  CHECK(accepted_from(l) == 0x7f000002);
  o = probe(port, NULL);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);
  CHECK(accepted_from(l) == 0x7f000001);

  /* Not an address of this host: the bind fails, the message names it. */
  o = probe(port, "192.0.2.1");
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_UNREACHABLE);
  CHECK(str_has(prober_outcome_message(o), "dial tcp 192.0.2.1:0->127.0.0.1:"));
  CHECK(str_has(prober_outcome_message(o), "bind: cannot assign requested address"));
  prober_outcome_free(o);
  /* IPv6 source, IPv4 target: nothing to connect to, named. */
  o = probe(port, "::1");
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_DNS);
  CHECK(str_has(prober_outcome_message(o),
                "no suitable address found: the source address ::1 is IPv6 and 127.0.0.1 is IPv4"));
  prober_outcome_free(o);
  close(l);
  dns_query_from_source();
  return 0;
}

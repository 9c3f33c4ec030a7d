/* ICMP echo probes (issue 36): the constructor and setters' checks, the shared connection
   setters on an ICMP spec, and real echoes to 127.0.0.1 with the facts of the run (counts,
   loss, round-trip times, the reply's hop limit, the socket kind). Raw sockets need root or
   CAP_NET_RAW, which ci/c-tests.sh has; unprivileged ones need net.ipv4.ping_group_range to
   admit our group, which the test reads and asserts either way. */
#include "testutil.h"

/* Runs `s` once and returns its outcome. */
static prober_outcome *run(prober_spec *s) {
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  return o;
}

/* True when net.ipv4.ping_group_range admits our group id (what an unprivileged ICMP socket
   needs). */
static int ping_group_admits_us(void) {
  FILE *f = fopen("/proc/sys/net/ipv4/ping_group_range", "r");
  CHECK(f != NULL);
  long lo = 0, hi = 0;
  CHECK(fscanf(f, "%ld %ld", &lo, &hi) == 2);
  fclose(f);
  long gid = (long)getgid();
  return lo <= gid && gid <= hi;
}

static void setters(void) {
  prober_spec *s = NULL;
  CHECK_STATUS(prober_spec_new_icmp(NULL, &s), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_icmp("127.0.0.1", NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_icmp("a b", &s), PROBER_E_INVALID_HOST);
  CHECK_STATUS(prober_spec_new_icmp("", &s), PROBER_E_INVALID_HOST);
  CHECK_OK(prober_spec_new_icmp("[::1]", &s));
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_icmp("127.0.0.1", &s));

  CHECK_STATUS(prober_spec_set_icmp_payload_size(NULL, 1), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_icmp_payload_size(s, 65528), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "payload_size is over 65527 bytes"));
  CHECK_OK(prober_spec_set_icmp_payload_size(s, 0));
  CHECK_OK(prober_spec_set_icmp_payload_size(s, 56));
  CHECK_STATUS(prober_spec_set_icmp_ttl(s, 256), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "TTL 256 is over 255"));
  CHECK_OK(prober_spec_set_icmp_ttl(s, 0));
  CHECK_OK(prober_spec_set_icmp_ttl(s, 64));
  CHECK_STATUS(prober_spec_set_icmp_packets(s, 0, 1000), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_set_icmp_packets(s, 10001, 1000), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_set_icmp_packets(s, 2, 1), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "at least 2ms"));
  CHECK_OK(prober_spec_set_icmp_packets(s, 1, 0));
  CHECK_STATUS(prober_spec_set_icmp_max_loss_percent(s, 101), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_set_icmp_max_loss_percent(s, UINT32_MAX), PROBER_E_INVALID);
  CHECK_OK(prober_spec_set_icmp_max_loss_percent(s, 0));
  CHECK_STATUS(prober_spec_set_icmp_socket(s, 3), PROBER_E_INVALID_ENUM);
  CHECK(str_has(prober_last_error(), "3 is not a PROBER_ICMP_SOCKET_* value"));
  CHECK_OK(prober_spec_set_icmp_socket(s, PROBER_ICMP_SOCKET_RAW));
  CHECK_OK(prober_spec_set_icmp_dont_fragment(s, true));

  /* The shared connection setters: family, source address and namespace apply; a close policy
     does not, and says so. */
  CHECK_OK(prober_spec_set_ip_family(s, PROBER_IP_FAMILY_V4));
  CHECK_OK(prober_spec_set_source_address(s, "127.0.0.1"));
  CHECK_OK(prober_spec_set_source_address(s, NULL));
  CHECK_OK(prober_spec_set_netns(s, "/proc/self/ns/net"));
  CHECK_STATUS(prober_spec_set_netns(s, "relative"), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_set_close_policy(s, PROBER_CLOSE_FIN), PROBER_E_WRONG_KIND);
  /* Other kinds' setters refuse an ICMP spec, and ICMP's refuse other kinds. */
  CHECK_STATUS(prober_spec_add_header(s, "X-A", "b"), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_dns_recursion_desired(s, false), PROBER_E_WRONG_KIND);
  CHECK(str_has(prober_last_error(), "applies to DNS probes only"));
  prober_spec *clone = NULL;
  CHECK_OK(prober_spec_clone(s, &clone));
  prober_spec_free(clone);
  prober_spec_free(s);

  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &s));
  CHECK_STATUS(prober_spec_set_icmp_ttl(s, 3), PROBER_E_WRONG_KIND);
  CHECK(str_has(prober_last_error(), "a TTL applies to ICMP probes only"));
  CHECK_STATUS(prober_spec_set_icmp_packets(s, 3, 10), PROBER_E_WRONG_KIND);
  prober_icmp_facts f;
  prober_outcome *o = run(s);
  CHECK(!prober_outcome_icmp(o, &f));
  CHECK(!prober_outcome_icmp(NULL, &f));
  CHECK(!prober_outcome_icmp(o, NULL));
  prober_outcome_free(o);
  prober_spec_free(s);
}

/* Three echoes 10 ms apart to 127.0.0.1 on `socket`; all answered. Returns the facts. */
static prober_icmp_facts three_echoes(uint32_t socket) {
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_icmp("127.0.0.1", &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_spec_set_icmp_packets(s, 3, 10));
  CHECK_OK(prober_spec_set_icmp_socket(s, socket));
  prober_outcome *o = run(s);
  prober_spec_free(s);
  prober_str m = prober_outcome_message(o);
  if (prober_outcome_result(o) != PROBER_RESULT_SUCCESS)
    fprintf(stderr, "socket %u: %.*s\n", socket, (int)m.len, m.ptr);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_NONE);
  prober_icmp_facts f;
  memset(&f, 0xff, sizeof f);
  CHECK(prober_outcome_icmp(o, &f));
  prober_outcome_free(o);
  CHECK(f.sent == 3 && f.received == 3);
  CHECK(f.loss == 0.0);
  CHECK(0 <= f.rtt_min_us && f.rtt_min_us <= f.rtt_avg_us && f.rtt_avg_us <= f.rtt_max_us);
  CHECK(f.rtt_stddev_us >= 0 && f.first_rtt_us >= f.rtt_min_us);
  CHECK(f.resolve_us == 0 && f.setup_us >= 0);
  CHECK(f.reply_hop_limit > 0 && f.reply_hop_limit <= 255);
  CHECK(f.error_family == 0 && f.error_type == 0 && f.error_code == 0);
  CHECK(f.reserved[0] == 0 && f.reserved[3] == 0);
  return f;
}

/* A one-shot check on an engine: the drained event's run has the facts, read through the
   engine until the next drain; another kind's event has none. */
static void engine_event(void) {
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_icmp("127.0.0.1", &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_spec_set_icmp_packets(s, 2, 5));
  CHECK_OK(prober_spec_set_icmp_socket(s, PROBER_ICMP_SOCKET_RAW));
  CHECK_OK(prober_engine_submit(e, s, 7));
  prober_spec_free(s);
  prober_event ev;
  size_t n = 0;
  double limit = now_s() + 30; /* a hang, not a timing claim */
  while (n == 0) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    n = prober_engine_drain(e, &ev, 1);
  }
  CHECK(ev.kind == PROBER_EVENT_CHECK && ev.tag == 7 && ev.result == PROBER_RESULT_SUCCESS);
  prober_icmp_facts f;
  CHECK(prober_engine_event_icmp(e, &ev, &f));
  CHECK(f.sent == 2 && f.received == 2 && f.socket == PROBER_ICMP_SOCKET_RAW);
  prober_dns_facts d;
  CHECK(!prober_engine_event_dns(e, &ev, &d));
  CHECK(!prober_engine_event_icmp(NULL, &ev, &f));
  CHECK(!prober_engine_event_icmp(e, NULL, &f));
  CHECK(!prober_engine_event_icmp(e, &ev, NULL));
  /* After the next drain the engine holds that run no more. */
  CHECK(prober_engine_drain(e, &ev, 1) == 0);
  CHECK(!prober_engine_event_icmp(e, &ev, &f));
  prober_engine_free(e);
}

int main(void) {
  setters();
  engine_event();

  prober_icmp_facts f = three_echoes(PROBER_ICMP_SOCKET_RAW);
  CHECK(f.socket == PROBER_ICMP_SOCKET_RAW);
  f = three_echoes(PROBER_ICMP_SOCKET_AUTO);
  CHECK(f.socket == (ping_group_admits_us() ? PROBER_ICMP_SOCKET_UNPRIVILEGED : PROBER_ICMP_SOCKET_RAW));

  /* Unprivileged only: works where the sysctl admits us, else Unknown naming the sysctl. */
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_icmp("127.0.0.1", &s));
  CHECK_OK(prober_spec_set_icmp_socket(s, PROBER_ICMP_SOCKET_UNPRIVILEGED));
  prober_outcome *o = run(s);
  if (ping_group_admits_us()) {
    CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
    CHECK(prober_outcome_icmp(o, &f) && f.socket == PROBER_ICMP_SOCKET_UNPRIVILEGED);
  } else {
    CHECK(prober_outcome_result(o) == PROBER_RESULT_UNKNOWN);
    CHECK(str_has(prober_outcome_message(o), "ping_group_range"));
  }
  prober_outcome_free(o);
  prober_spec_free(s);

  /* More requests than fit in the timeout: refused when run, never a partial count. */
  CHECK_OK(prober_spec_new_icmp("127.0.0.1", &s));
  CHECK_OK(prober_spec_set_icmp_packets(s, 5, 1000));
  o = run(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_UNKNOWN);
  CHECK(str_has(prober_outcome_message(o), "5 packets"));
  prober_outcome_free(o);
  prober_spec_free(s);

  /* A source address of the other family than the host's literal: refused when run. */
  CHECK_OK(prober_spec_new_icmp("127.0.0.1", &s));
  CHECK_OK(prober_spec_set_source_address(s, "::1"));
  o = run(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_UNKNOWN);
  CHECK(str_has(prober_outcome_message(o), "other family"));
  prober_outcome_free(o);
  prober_spec_free(s);

  /* IPv6: ::1. */
  CHECK_OK(prober_spec_new_icmp("::1", &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_spec_set_icmp_socket(s, PROBER_ICMP_SOCKET_RAW));
  o = run(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(prober_outcome_icmp(o, &f) && f.sent == 1 && f.received == 1 && f.reply_hop_limit > 0);
  prober_outcome_free(o);
  prober_spec_free(s);
  return 0;
}

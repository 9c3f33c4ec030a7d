/* DNS probes (issue 36) against a real server: Debian's nsd, started here on a loopback port
   with a zone this test writes (ci/c-tests.sh installs it; ci/dns-server.sh runs prober-dns's
   own tests against it). The constructor and setters' checks, the shared connection setters,
   rcodes, record types, the record checks, TCP, truncation and the facts of each run. */
#include <fcntl.h>

#include "testutil.h"

static const char ZONE[] =
    "$ORIGIN probe.test.\n"
    "$TTL 3600\n"
    "@ IN SOA ns1.probe.test. hostmaster.probe.test. 2026112901 7200 3600 1209600 300\n"
    "@ IN NS ns1\n"
    "ns1 IN A 127.0.0.1\n"
    "a IN A 192.0.2.1\n"
    "a IN AAAA 2001:db8::1\n"
    "alias IN CNAME a\n"
    "@ IN MX 10 mail\n"
    "mail IN A 192.0.2.25\n";

typedef struct {
  pid_t pid;
  int port;
  char dir[64];
} nsd_server;

static void write_file(const char *dir, const char *name, const char *text) {
  char path[160];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  CHECK(fputs(text, f) >= 0);
  CHECK(fclose(f) == 0);
}

/* A loopback port free for TCP when asked (nsd binds UDP and TCP on it). */
static int free_port(void) {
  int port = 0;
  close(listen_loopback(&port));
  return port;
}

/* A DNS spec of `name` (type `qtype`) to the server. */
static prober_spec *dns_spec(const nsd_server *n, const char *name, uint32_t qtype) {
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_dns("127.0.0.1", n->port, name, &s));
  CHECK_OK(prober_spec_set_dns_query(s, qtype, 1));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  return s;
}

/* Runs `s` (and frees it); returns the outcome and its facts in `f`. */
static prober_outcome *run(prober_spec *s, prober_dns_facts *f) {
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  prober_spec_free(s);
  memset(f, 0xff, sizeof *f);
  CHECK(prober_outcome_dns(o, f));
  return o;
}

/* True once nsd answers the SOA of probe.test over UDP (a probe of 200 ms). */
static int nsd_answers(const nsd_server *n) {
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_dns("127.0.0.1", n->port, "probe.test", &s));
  CHECK_OK(prober_spec_set_dns_query(s, 6, 1));
  CHECK_OK(prober_spec_set_timeout_ms(s, 200));
  prober_dns_facts f;
  prober_outcome *o = run(s, &f);
  int ok = prober_outcome_result(o) == PROBER_RESULT_SUCCESS;
  prober_outcome_free(o);
  return ok;
}

static nsd_server nsd_start(void) {
  const char *bin = access("/usr/sbin/nsd", X_OK) == 0 ? "/usr/sbin/nsd" : "nsd";
  nsd_server n = {0, 0, "/tmp/prober-c-nsd-XXXXXX"};
  CHECK(mkdtemp(n.dir) != NULL);
  /* ZONE and twelve TXT records of big.probe.test, about 1 KB: more than a UDP answer without
     EDNS0 may carry (512 bytes), so nsd truncates it. */
  char zone[sizeof ZONE + 12 * 96];
  size_t len = (size_t)snprintf(zone, sizeof zone, "%s", ZONE);
  for (int i = 0; i < 12; i++)
    len += (size_t)snprintf(zone + len, sizeof zone - len,
                            "big IN TXT \"%060d-%d\"\n", 0, i);
  CHECK(len < sizeof zone);
  write_file(n.dir, "probe.test.zone", zone);
  /* A few tries: the port is free when chosen, another process may take it before nsd. */
  for (int attempt = 0; attempt < 5; attempt++) {
    n.port = free_port();
    char conf[2048];
    snprintf(conf, sizeof conf,
             "server:\n  ip-address: 127.0.0.1@%d\n  port: %d\n  username: \"\"\n  chroot: \"\"\n"
             "  zonesdir: \"%s\"\n  database: \"\"\n  pidfile: \"%s/nsd.pid\"\n"
             "  xfrdfile: \"%s/xfrd.state\"\n  zonelistfile: \"%s/zone.list\"\n  xfrdir: \"%s\"\n"
             "  logfile: \"%s/nsd.log\"\n  server-count: 1\n  do-ip6: no\n  verbosity: 1\n"
             "remote-control:\n  control-enable: no\n"
             "zone:\n  name: probe.test\n  zonefile: \"probe.test.zone\"\n"
             "zone:\n  name: broken.test\n  zonefile: \"missing.zone\"\n",
             n.port, n.port, n.dir, n.dir, n.dir, n.dir, n.dir, n.dir);
    write_file(n.dir, "nsd.conf", conf);
    char conf_path[128];
    snprintf(conf_path, sizeof conf_path, "%s/nsd.conf", n.dir);
    char *argv[] = {(char *)bin, "-d", "-c", conf_path, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    char err_path[128];
    snprintf(err_path, sizeof err_path, "%s/nsd.stderr", n.dir);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    int rc = posix_spawnp(&n.pid, bin, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      fprintf(stderr, "cannot start nsd (%s): run ci/c-tests.sh, which installs Debian's nsd\n",
              strerror(rc));
      exit(1);
    }
    /* Ready when it answers (a probe of at most 200 ms; refused at once before nsd binds, so
       10 ms apart then), within 20 s or until it exits. */
    int status = 0, exited = 0;
    double limit = now_s() + 20;
    while (!exited && now_s() < limit) {
      exited = waitpid(n.pid, &status, WNOHANG) == n.pid;
      if (!exited && nsd_answers(&n)) return n;
      nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    if (exited) {
      fprintf(stderr, "nsd exited (status %#x)\n", status);
    } else {
      kill(n.pid, SIGKILL);
      waitpid(n.pid, NULL, 0);
    }
  }
  fprintf(stderr, "nsd did not answer on a loopback port after 5 tries (see %s/nsd.log and nsd.stderr)\n", n.dir);
  exit(1);
}

static void nsd_stop(nsd_server *n) {
  /* SIGTERM, not SIGKILL: nsd's main process then stops its server and xfrd children. */
  CHECK(kill(n->pid, SIGTERM) == 0);
  CHECK(waitpid(n->pid, NULL, 0) == n->pid);
  DIR *d = opendir(n->dir);
  CHECK(d != NULL);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char path[400];
    snprintf(path, sizeof path, "%s/%s", n->dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  CHECK(rmdir(n->dir) == 0);
}

static void setters(void) {
  prober_spec *s = NULL;
  CHECK_STATUS(prober_spec_new_dns(NULL, 53, "a.test", &s), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_dns("127.0.0.1", 53, NULL, &s), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_dns("127.0.0.1", 53, "a.test", NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_dns("a b", 53, "a.test", &s), PROBER_E_INVALID_HOST);
  CHECK_STATUS(prober_spec_new_dns("127.0.0.1", 0, "a.test", &s), PROBER_E_INVALID_PORT);
  CHECK_STATUS(prober_spec_new_dns("127.0.0.1", 65536, "a.test", &s), PROBER_E_INVALID_PORT);
  /* A bad name: an empty label. */
  CHECK_STATUS(prober_spec_new_dns("127.0.0.1", 53, "a..test", &s), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "DNS query name"));
  CHECK_OK(prober_spec_new_dns("[::1]", 53, "a.test", &s));

  CHECK_STATUS(prober_spec_set_dns_transport(NULL, PROBER_DNS_TRANSPORT_TCP), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_dns_transport(s, 7), PROBER_E_INVALID_ENUM);
  /* A network namespace applies to DNS probes (the path is checked; the run enters it). */
  CHECK_OK(prober_spec_set_netns(s, "/proc/self/ns/net"));
  CHECK_STATUS(prober_spec_set_netns(s, "relative"), PROBER_E_INVALID);
  CHECK_OK(prober_spec_set_dns_transport(s, PROBER_DNS_TRANSPORT_TCP));
  CHECK_STATUS(prober_spec_set_dns_query(s, 0, 1), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "DNS type 0 is out of range"));
  CHECK_STATUS(prober_spec_set_dns_query(s, 28, 65536), PROBER_E_INVALID);
  CHECK_OK(prober_spec_set_dns_query(s, 28, 1));
  CHECK_OK(prober_spec_set_dns_recursion_desired(s, false));
  CHECK_STATUS(prober_spec_set_dns_edns_udp_size(s, 65536), PROBER_E_INVALID);
  CHECK_OK(prober_spec_set_dns_edns_udp_size(s, 4096));
  CHECK_OK(prober_spec_set_dns_edns_udp_size(s, 0));
  CHECK_OK(prober_spec_set_dns_tcp_on_truncation(s, true));
  const uint16_t rcodes[] = {0, 3};
  CHECK_STATUS(prober_spec_set_dns_valid_rcodes(s, NULL, 2), PROBER_E_NULL);
  const uint16_t bad_rcode[] = {4096};
  CHECK_STATUS(prober_spec_set_dns_valid_rcodes(s, bad_rcode, 1), PROBER_E_INVALID);
  CHECK_OK(prober_spec_set_dns_valid_rcodes(s, rcodes, 2));
  CHECK_OK(prober_spec_set_dns_valid_rcodes(s, NULL, 0));
  CHECK_STATUS(prober_spec_add_dns_rr_check(s, 3, PROBER_DNS_FAIL_IF_MATCHES, "x"),
               PROBER_E_INVALID_ENUM);
  CHECK_STATUS(prober_spec_add_dns_rr_check(s, PROBER_DNS_SECTION_ANSWER, 4, "x"),
               PROBER_E_INVALID_ENUM);
  CHECK_STATUS(prober_spec_add_dns_rr_check(s, PROBER_DNS_SECTION_ANSWER,
                                            PROBER_DNS_FAIL_IF_MATCHES, ""),
               PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_add_dns_rr_check(s, PROBER_DNS_SECTION_ANSWER,
                                            PROBER_DNS_FAIL_IF_MATCHES, "("),
               PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_add_dns_rr_check(s, PROBER_DNS_SECTION_ANSWER,
                                            PROBER_DNS_FAIL_IF_MATCHES, NULL),
               PROBER_E_NULL);
  CHECK_OK(prober_spec_add_dns_rr_check(s, PROBER_DNS_SECTION_AUTHORITY,
                                        PROBER_DNS_FAIL_IF_NONE_MATCHES, "SOA"));

  /* The shared connection setters: the family and a source address apply (test_source_address
     checks where the query comes from); a close policy does not, and says so. */
  CHECK_OK(prober_spec_set_ip_family(s, PROBER_IP_FAMILY_PREFER_V6));
  CHECK_OK(prober_spec_set_source_address(s, "127.0.0.1"));
  CHECK_STATUS(prober_spec_set_close_policy(s, PROBER_CLOSE_FIN), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_icmp_ttl(s, 3), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_add_header(s, "X-A", "b"), PROBER_E_WRONG_KIND);
  prober_spec_free(s);

  const char *argv[] = {"true"};
  CHECK_OK(prober_spec_new_exec(argv, 1, &s));
  CHECK_STATUS(prober_spec_set_dns_tcp_on_truncation(s, true), PROBER_E_WRONG_KIND);
  CHECK(str_has(prober_last_error(), "TCP on truncation applies to DNS probes only"));
  CHECK_STATUS(prober_spec_add_dns_rr_check(s, PROBER_DNS_SECTION_ANSWER,
                                            PROBER_DNS_FAIL_IF_MATCHES, "x"),
               PROBER_E_WRONG_KIND);
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  prober_dns_facts f;
  CHECK(!prober_outcome_dns(o, &f));
  CHECK(!prober_outcome_dns(NULL, &f));
  CHECK(!prober_outcome_dns(o, NULL));
  prober_outcome_free(o);
  prober_spec_free(s);
}

int main(void) {
  setters();
  nsd_server n = nsd_start();
  prober_dns_facts f;

  /* An A record over UDP. */
  prober_outcome *o = run(dns_spec(&n, "a.probe.test", 1), &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(f.query_succeeded && f.rcode == 0 && f.answer_rrs == 1 && f.serial == -1);
  CHECK(!f.truncated && !f.retried_over_tcp && f.ignored == 0);
  CHECK(f.resolve_us == 0); /* an address: nothing to resolve */
  CHECK(f.reserved[0] == 0 && f.reserved[3] == 0);
  prober_outcome_free(o);

  /* AAAA over TCP, through a name the server has. */
  prober_spec *s = dns_spec(&n, "a.probe.test.", 28);
  CHECK_OK(prober_spec_set_dns_transport(s, PROBER_DNS_TRANSPORT_TCP));
  o = run(s, &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(f.rcode == 0 && f.answer_rrs == 1);
  prober_outcome_free(o);

  /* SOA: the serial; the authority section is empty, the NS check of the answer holds. */
  s = dns_spec(&n, "probe.test", 6);
  CHECK_OK(prober_spec_add_dns_rr_check(s, PROBER_DNS_SECTION_ANSWER,
                                        PROBER_DNS_FAIL_IF_NOT_MATCHES, "\\tSOA\\tns1\\.probe\\.test\\."));
  o = run(s, &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(f.serial == 2026112901 && f.answer_rrs == 1);
  prober_outcome_free(o);

  /* A check that fails: the message names the expression and the record. */
  s = dns_spec(&n, "a.probe.test", 1);
  CHECK_OK(prober_spec_add_dns_rr_check(s, PROBER_DNS_SECTION_ANSWER, PROBER_DNS_FAIL_IF_MATCHES,
                                        "192\\.0\\.2\\.1"));
  o = run(s, &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_BODY);
  CHECK(str_has(prober_outcome_message(o), "192.0.2.1"));
  prober_outcome_free(o);

  /* NXDOMAIN: a Failure with the rcode, unless it is among the valid rcodes. */
  o = run(dns_spec(&n, "nothing.probe.test", 1), &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_STATUS);
  CHECK(str_has(prober_outcome_message(o), "NXDOMAIN"));
  CHECK(f.query_succeeded && f.rcode == 3 && f.answer_rrs == 0 && f.authority_rrs == 1);
  prober_outcome_free(o);
  s = dns_spec(&n, "nothing.probe.test", 1);
  const uint16_t nxdomain[] = {3};
  CHECK_OK(prober_spec_set_dns_valid_rcodes(s, nxdomain, 1));
  o = run(s, &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);

  /* A zone the server failed to load: SERVFAIL. */
  o = run(dns_spec(&n, "broken.test", 1), &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE && f.rcode == 2);
  prober_outcome_free(o);

  /* Twelve TXT records over UDP: truncated, checked as they came; then asked again over TCP. */
  o = run(dns_spec(&n, "big.probe.test", 16), &f);
  CHECK(f.truncated && !f.retried_over_tcp && f.answer_rrs < 12);
  prober_outcome_free(o);
  s = dns_spec(&n, "big.probe.test", 16);
  CHECK_OK(prober_spec_set_dns_tcp_on_truncation(s, true));
  o = run(s, &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(f.truncated && f.retried_over_tcp && f.answer_rrs == 12);
  prober_outcome_free(o);

  /* A port nobody serves over TCP: refused, no answer. */
  s = NULL;
  CHECK_OK(prober_spec_new_dns("127.0.0.1", free_port(), "a.probe.test", &s));
  CHECK_OK(prober_spec_set_dns_transport(s, PROBER_DNS_TRANSPORT_TCP));
  o = run(s, &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_REFUSED);
  CHECK(!f.query_succeeded && f.rcode == -1);
  prober_outcome_free(o);

  /* DNS over TLS to nsd's plain port, which does not speak TLS: a failed probe, no answer. A
     TLS setter selects DNS over TLS too; going back to UDP drops it, and the query succeeds. */
  s = dns_spec(&n, "a.probe.test", 1);
  CHECK_OK(prober_spec_set_dns_transport(s, PROBER_DNS_TRANSPORT_TLS));
  CHECK_OK(prober_spec_set_timeout_ms(s, 1000));
  o = run(s, &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(!f.query_succeeded && f.rcode == -1);
  prober_outcome_free(o);
  s = dns_spec(&n, "a.probe.test", 1);
  CHECK_OK(prober_spec_set_tls_verify(s, PROBER_TLS_VERIFY_NONE, NULL));
  CHECK_OK(prober_spec_set_timeout_ms(s, 1000));
  o = run(s, &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  prober_outcome_free(o);
  s = dns_spec(&n, "a.probe.test", 1);
  CHECK_OK(prober_spec_set_tls_verify(s, PROBER_TLS_VERIFY_NONE, NULL));
  CHECK_OK(prober_spec_set_dns_transport(s, PROBER_DNS_TRANSPORT_UDP));
  o = run(s, &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(f.query_succeeded && f.rcode == 0 && f.answer_rrs == 1);
  prober_outcome_free(o);

  /* IPv6 only, to an IPv4 server: nothing to query. */
  s = dns_spec(&n, "a.probe.test", 1);
  CHECK_OK(prober_spec_set_ip_family(s, PROBER_IP_FAMILY_V6));
  o = run(s, &f);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_DNS);
  prober_outcome_free(o);

  nsd_stop(&n);
  return 0;
}

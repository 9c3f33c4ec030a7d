/* Probes in another network namespace through the C ABI (issue 29): a server answers only
 * inside a namespace made with `ip netns`, on 127.0.0.1, on the same port as a different
 * server on the host; each probe reaches the one it names. Needs root (CI runs as root):
 * without it the test fails, saying so. The namespace is deleted by the parent process
 * whatever the test (the child) does, a failed CHECK included. */
#include "testutil.h"

static char ns_name[64];
static char ns_path[96];

static void ns_ip(const char *args) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "ip -n %s %s", ns_name, args);
  CHECK(system(cmd) == 0);
}

/* prober-target run inside the namespace with `ip netns exec`, on `port`. */
static target_server target_start_inside(int port) {
  char port_arg[16];
  snprintf(port_arg, sizeof port_arg, "%d", port);
  char *argv[] = {"ip", "netns", "exec", ns_name, (char *)PROBER_TARGET_BIN, "--port", port_arg,
                  NULL};
  target_server t = target_start_argv(argv);
  CHECK(t.port == port);
  return t;
}

static prober_outcome *check_http(const char *url, const char *netns) {
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 2000));
  if (netns) CHECK_OK(prober_spec_set_netns(s, netns));
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  prober_spec_free(s);
  return o;
}

static int run(void) {
  ns_ip("link set lo up");
  target_server host = target_start();
  target_control(&host, "/control/unhealthy");
  target_server guest = target_start_inside(host.port);
  char url[256];
  target_url(&host, "/health", url, sizeof url);

  /* The same URL: 200 from inside, 503 from the host. */
  prober_outcome *o = check_http(url, ns_path);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(prober_outcome_http_status(o) == 200);
  prober_outcome_free(o);
  o = check_http(url, NULL);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_http_status(o) == 503);
  prober_outcome_free(o);

  /* TCP through an engine, one-shot: a port that listens only inside. */
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", host.port, &s));
  CHECK_OK(prober_spec_set_netns(s, ns_path));
  o = NULL;
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);
  prober_spec_free(s);

  /* A path that is not there: Unknown, reason namespace, naming the path. */
  o = check_http(url, "/run/netns/prober-c-no-such-namespace");
  CHECK(prober_outcome_result(o) == PROBER_RESULT_UNKNOWN);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_NAMESPACE);
  CHECK(strcmp(prober_reason_name(PROBER_REASON_NAMESPACE), "namespace") == 0);
  CHECK(str_has(prober_outcome_message(o),
                "cannot use network namespace \"/run/netns/prober-c-no-such-namespace\": no such "
                "file or directory"));
  prober_outcome_free(o);
  /* /proc/self/ns/mnt: a namespace of another type. */
  o = check_http(url, "/proc/self/ns/mnt");
  CHECK(prober_outcome_reason(o) == PROBER_REASON_NAMESPACE);
  CHECK(str_has(prober_outcome_message(o), "a mount namespace, not a network namespace"));
  prober_outcome_free(o);

  /* Refused where it can be seen. */
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 80, &s));
  CHECK_STATUS(prober_spec_set_netns(s, "run/netns/x"), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "must be absolute"));
  CHECK_STATUS(prober_spec_set_netns(s, ""), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_set_netns(s, NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_netns(NULL, ns_path), PROBER_E_NULL);
  prober_spec_free(s);
  const char *argv[] = {"true"};
  CHECK_OK(prober_spec_new_exec(argv, 1, &s));
  CHECK_STATUS(prober_spec_set_netns(s, ns_path), PROBER_E_WRONG_KIND);
  prober_spec_free(s);

  target_stop(&guest);
  target_stop(&host);
  return 0;
}

int main(void) {
  snprintf(ns_name, sizeof ns_name, "prober-c-%d", (int)getpid());
  snprintf(ns_path, sizeof ns_path, "/run/netns/%s", ns_name);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "ip netns add %s", ns_name);
  if (system(cmd) != 0) {
    fprintf(stderr, "cannot create network namespace %s: namespace tests need root and iproute2 "
                    "(CI runs them as root); this test fails rather than skips\n", ns_name);
    return 1;
  }
  pid_t child = fork();
  CHECK(child >= 0);
  if (child == 0) _exit(run());
  int st = 0;
  CHECK(waitpid(child, &st, 0) == child);
  snprintf(cmd, sizeof cmd, "ip netns del %s", ns_name);
  CHECK(system(cmd) == 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

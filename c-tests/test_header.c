/* The header is self-contained C11: it includes only itself and compiles with -Wpedantic. */
#include "prober.h"

int main(void) {
  prober_status s = PROBER_OK;
  prober_str v = {0, 0};
  prober_event ev;
  ev.kind = PROBER_EVENT_STATE;
  (void)v;
  return (int)s + (int)(ev.kind != PROBER_EVENT_STATE) + (PROBER_ABI_VERSION < 1);
}

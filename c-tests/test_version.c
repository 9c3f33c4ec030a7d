/* Version macros against the library's run-time values, including the packed number. */
#include "testutil.h"

int main(void) {
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", PROBER_VERSION_MAJOR, PROBER_VERSION_MINOR, PROBER_VERSION_PATCH);
  CHECK(strcmp(prober_version(), want) == 0);
  CHECK(prober_version_num() == (uint32_t)PROBER_VERSION_NUM);
  CHECK(PROBER_VERSION_NUM == ((PROBER_VERSION_MAJOR << 16) | (PROBER_VERSION_MINOR << 8) | PROBER_VERSION_PATCH));
  CHECK(PROBER_AT_LEAST_VERSION(0, 0, 1));
  CHECK(!PROBER_AT_LEAST_VERSION(PROBER_VERSION_MAJOR + 1, 0, 0));
  CHECK(prober_abi_version() == PROBER_ABI_VERSION);
  CHECK(strcmp(prober_status_str(PROBER_OK), "ok") == 0);
  CHECK(strcmp(prober_status_str(PROBER_E_NULL), "a required argument is NULL") == 0);
  CHECK(strcmp(prober_status_str(123456), "unknown status") == 0);
  puts("test_version: 1 passed, 0 failed");
  return 0;
}

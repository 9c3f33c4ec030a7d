// The header compiles as C++ too, and its functions link with C linkage.
#include "prober.h"

int main() {
  const char *v = prober_version();
  return (v == nullptr) || prober_abi_version() != PROBER_ABI_VERSION;
}

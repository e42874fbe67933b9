/* Uses the installed runtime's public API: starts it, tracks a buffer, stops. */
#include <hpvm/hpvm_rt.h>
#include <stdio.h>

int main(void) {
  static float data[256];
  hpvm_rt_check(hpvm_rt_track(data, sizeof(data)));
  hpvm_rt_check(hpvm_rt_request_host(data, sizeof(data), HPVM_RT_ACCESS_INOUT));
  hpvm_rt_check(hpvm_rt_untrack(data));
  hpvm_rt_shutdown();
  printf("runtime: ok\n");
  return 0;
}

/*===- hpvm_hdc.h - the HDC intrinsics under the name HPVM's programs include ===*
 * Programs written for HPVM's HDC extension include "hpvm_hdc.h": the same as hdc.h.
 *===----------------------------------------------------------------------===*/
#include "hdc.h"

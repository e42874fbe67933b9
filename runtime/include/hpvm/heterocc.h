/*===- heterocc.h - Hetero-C++ under the release's header name --------------===*
 * Programs written for HPVM 2.x include "heterocc.h": the same as hetero.h.
 *===----------------------------------------------------------------------===*/
#include "hetero.h"

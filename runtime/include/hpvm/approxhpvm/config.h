/* config.h - what ApproxHPVM's DNN programs include for the tensor runtime's configuration.
 * HPVM chooses approximation knobs at compile time (docs/Approximation.md); there is no
 * global knobs file. hpvm-cc searches this directory after the program's own, so a
 * project's own config.h still wins. */
#ifndef HPVM_APPROXHPVM_CONFIG_H
#define HPVM_APPROXHPVM_CONFIG_H
#define GLOBAL_KNOBS_FILE ""
#endif

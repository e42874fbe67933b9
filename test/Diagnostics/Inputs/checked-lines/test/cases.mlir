// RUN: hpvm-opt %s 2>&1 | FileCheck %s
// RUN: hpvm-opt %s 2>&1 | FileCheck %s --check-prefixes=OTHER,MORE
// CHECK: error: fixture: checked by a CHECK line of the default prefix
// MORE-NEXT: fixture: checked by a line of a prefix the file names
// CHECK-NOT: fixture: in a CHECK-NOT line only, never checked
// fixture: in a comment of a test only, never checked
// expected-error @below {{fixture: checked by an expected-error annotation}}
// expected-warning@+1 {{fixture: checked by an expected-warning annotation}}
"test.op"() {message = "fixture: in the input of a test only, never checked"} : () -> ()

//===- Main.cpp - main() of the executables mgsc produces -----------------===//
//
// Kept apart from libmgsrt_driver (in libmgsrt_driver_main) so that tests can
// link the driver and call mgsrt_driver_main with their own main.
//
//===----------------------------------------------------------------------===//

#include "mgsrt/driver.h"

int main(int argc, char **argv) { return mgsrt_driver_main(argc, argv); }

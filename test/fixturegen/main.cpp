// railyard-fixture DESCRIPTION.json OUT_ROOT: writes OUT_ROOT/sys/... (see fixture.h).
#include <iostream>

#include "test/fixturegen/fixture.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: railyard-fixture DESCRIPTION.json OUT_ROOT\n";
    return 2;
  }
  try {
    railyard::fixture::generate_file(argv[1], argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "railyard-fixture: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// Reads and scopes a flag, and prints the version, through the installed
// umbrella header (so every public header must compile on its own).
#include <backplane/backplane.h>

#include <cstdio>

int main() {
  bool inside = false;
  {
    bp::backends::cudnn::flags_guard g({.benchmark = true});
    inside = bp::backends::cudnn::benchmark();
  }
  const bool after = bp::backends::cudnn::benchmark();
  std::printf("backplane %s scoped=%d after=%d\n", BACKPLANE_VERSION_STRING, inside, after);
  return (inside && !after) ? 0 : 1;
}

# lib/topo sources and unit tests are added here.

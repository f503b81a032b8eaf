// The test cluster's fabric as Slurm's topology.conf: 4 leaves of 4 nodes
// (leaf1 n[1-4] ... leaf4 n[13-16]), 2 pods of 2 leaves, one spine.
#pragma once

inline constexpr const char *k_tree16_topology_conf = "SwitchName=leaf1 Nodes=n[1-4]\n"
						      "SwitchName=leaf2 Nodes=n[5-8]\n"
						      "SwitchName=leaf3 Nodes=n[9-12]\n"
						      "SwitchName=leaf4 Nodes=n[13-16]\n"
						      "SwitchName=pod1 Switches=leaf[1-2]\n"
						      "SwitchName=pod2 Switches=leaf[3-4]\n"
						      "SwitchName=spine Switches=pod[1-2]\n";

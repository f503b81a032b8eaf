# lib/exchange: the files and marks loom's processes hand each other: one
# writer and one reader each. The failure statistics (jobcomp/health writes
# them; spank_ckpt, select/topo and loom sim read them), the spare pool file
# (select/topo writes it; jobcomp/health and `loom place --spares` read it)
# and the suspect mark on a node (`loom health check --drain` sets it;
# select/topo and jobcomp/health read it). It uses lib/util only, so that a
# reader links the format and not its writer's module.
lib_libloom_exchange_la_SOURCES += \
	lib/exchange/failure_stats.hpp lib/exchange/failure_stats.cpp \
	lib/exchange/spare_file.hpp lib/exchange/spare_file.cpp \
	lib/exchange/suspect_mark.hpp lib/exchange/suspect_mark.cpp

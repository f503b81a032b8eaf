// What the select interface adapters (select_api_v*.cpp, one per family of
// Slurm releases) share: a table-driven way to declare the operations that
// select/topo hands to cons_tres unchanged.
//
// A family lists its pass-through operations once, as
//   X(return type, operation, (parameters), (arguments), WRAP)
// where the operation is the name after "select_p_" and WRAP is LOOM_KEEP, or
// LOOM_CHANGED for an operation that can change what jobs hold. From that one
// list come the slots for cons_tres's functions, the symbol table that
// cons_tres.cpp resolves, and the extern "C" entry points Slurm calls.
#pragma once

#include "plugins/select_topo/cons_tres.hpp"

#define LOOM_KEEP
#define LOOM_CHANGED ::loom::select_topo::changed

#define LOOM_OP_SLOT(ret, op, params, args, wrap) ret(*op) params = nullptr;
#define LOOM_OP_SYMBOL(ret, op, params, args, wrap) {"select_p_" #op, reinterpret_cast<void **>(&g_ops.op)},
#define LOOM_OP_ENTRY(ret, op, params, args, wrap)                                                                  \
	ret select_p_##op params { return wrap(g_ops.op args); }

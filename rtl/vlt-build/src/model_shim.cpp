
// ---- generated flat C shim for @PREFIX@ (verilator-sys/build/model_shim.cpp) ----
#include "verilated_vcd_c.h"
#include <exception>
extern "C" void vlt_set_error(const char* msg);

// Verilator keeps a current context per thread (`Verilated::threadContextp`), set by each new
// context and read by $finish/$stop, scope registration and deletion. Each model has its own
// context, so every entry point below that may reach Verilator's runtime first makes the
// model's context current: otherwise a model used after another was made acts on that one's
// context (its $finish lands there), and one deleted after another was deleted reads freed
// memory (a multi-chip run with a block on the RTL in each chip hung there).
namespace {
struct Shim_@M@ {
    VerilatedContext* ctx;
    @PREFIX@* top;
    VerilatedVcdC* tfp;
};
}  // namespace

extern "C" void* vlt_@M@_new(void) {
    try {
        auto* s = new Shim_@M@{nullptr, nullptr, nullptr};
        s->ctx = new VerilatedContext;
        s->ctx->traceEverOn(true);
        s->top = new @PREFIX@(s->ctx, "TOP");
        return s;
    } catch (const std::exception& e) {
        vlt_set_error(e.what());
    } catch (...) { vlt_set_error("unknown C++ exception constructing @PREFIX@"); }
    return nullptr;
}

extern "C" void vlt_@M@_delete(void* p) {
    auto* s = static_cast<Shim_@M@*>(p);
    Verilated::threadContextp(s->ctx);
    try { s->top->final(); } catch (...) {}
    if (s->tfp) { try { s->tfp->close(); } catch (...) {} delete s->tfp; }
    delete s->top;
    delete s->ctx;
    delete s;
    // Never left pointing at the context just freed (Verilator falls back to it).
    Verilated::threadContextp(Verilated::defaultContextp());
}

// 0: ok; 1: the model has executed $finish; -1: an error (vlt_last_error). One call per eval.
extern "C" int vlt_@M@_eval(void* p) {
    auto* s = static_cast<Shim_@M@*>(p);
    Verilated::threadContextp(s->ctx);
    try {
        s->top->eval();
        return s->ctx->gotFinish() ? 1 : 0;
    } catch (const std::exception& e) {
        vlt_set_error(e.what());
    } catch (...) { vlt_set_error("unknown C++ exception in eval"); }
    return -1;
}

extern "C" void vlt_@M@_ports(void* p, void** out) {
    auto* s = static_cast<Shim_@M@*>(p);
@PORT_PTRS@}

extern "C" int vlt_@M@_trace_open(void* p, const char* path) {
    auto* s = static_cast<Shim_@M@*>(p);
    if (s->tfp) return -1;
    Verilated::threadContextp(s->ctx);
    try {
        auto* t = new VerilatedVcdC;
        s->top->trace(t, 99);
        t->open(path);
        if (!t->isOpen()) { delete t; return -2; }
        s->tfp = t;
        return 0;
    } catch (const std::exception& e) { vlt_set_error(e.what()); }
    catch (...) { vlt_set_error("unknown C++ exception opening a VCD"); }
    return -2;
}

extern "C" void vlt_@M@_trace_dump(void* p, uint64_t t) {
    auto* s = static_cast<Shim_@M@*>(p);
    if (s->tfp) { Verilated::threadContextp(s->ctx); s->tfp->dump(t); }
}

extern "C" void vlt_@M@_trace_close(void* p) {
    auto* s = static_cast<Shim_@M@*>(p);
    if (s->tfp) { Verilated::threadContextp(s->ctx); s->tfp->close(); delete s->tfp; s->tfp = nullptr; }
}


// ---- generated flat C shim for @PREFIX@ (verilator-sys/build/model_shim.cpp) ----
#include "verilated_vcd_c.h"
#include "verilated_syms.h"
#include <exception>
#include <string>
#include <vector>
extern "C" void vlt_set_error(const char* msg);
extern "C" int vlt_notes_pending(void);

// Verilator keeps a current context per thread (`Verilated::threadContextp`), set by each new
// context and read by $finish/$stop, scope registration and deletion. Each model has its own
// context, so every entry point below that may reach Verilator's runtime first makes the
// model's context current: otherwise a model used after another was made acts on that one's
// context (its $finish lands there), and one deleted after another was deleted reads freed
// memory (a multi-chip run with a block on the RTL in each chip hung there).
namespace {
// A public signal: its path below the top module, its storage and width.
struct Sig_@M@ {
    std::string name;
    void* data;
    uint32_t width;
    uint32_t bytes;  // 1, 2, 4 or 8; 0: 32-bit words (wider than 64 bits)
    int rw;
};
struct Shim_@M@ {
    VerilatedContext* ctx;
    @PREFIX@* top;
    VerilatedVcdC* tfp;
    std::vector<Sig_@M@> sigs;
};

// Every public variable of every scope, by path below the top ("cnt", "u_core.acc"), in
// Verilator's scope and variable order (both sorted by name): unpacked arrays, parameters and
// signals wider than 128 bits left out.
void list_signals_@M@(Shim_@M@* s) {
    const VerilatedScopeNameMap* scopes = s->ctx->scopeNameMap();
    if (!scopes) return;
    const std::string root = std::string("TOP.") + "@TOP@";
    for (const auto& it : *scopes) {
        const VerilatedScope* sc = it.second;
        VerilatedVarNameMap* vars = sc->varsp();
        if (!vars) continue;
        std::string sn = sc->name();
        std::string prefix;
        if (sn == root) prefix = "";
        else if (sn.rfind(root + ".", 0) == 0) prefix = sn.substr(root.size() + 1) + ".";
        else prefix = sn + ".";
        for (auto& v : *vars) {
            const VerilatedVar& var = v.second;
            if (var.udims() > 0 || var.isParam()) continue;
            uint32_t width = var.dims() > 0 ? (uint32_t)var.packed().elements() : 1;
            uint32_t bytes = 0;
            switch (var.vltype()) {
                case VLVT_UINT8: bytes = 1; break;
                case VLVT_UINT16: bytes = 2; break;
                case VLVT_UINT32: bytes = 4; break;
                case VLVT_UINT64: bytes = 8; break;
                case VLVT_WDATA: bytes = 0; break;
                default: continue;
            }
            if (width > 128) continue;
            s->sigs.push_back(Sig_@M@{prefix + var.name(), var.datap(), width, bytes, var.isPublicRW() ? 1 : 0});
        }
    }
}
}  // namespace

extern "C" void* vlt_@M@_new(void) {
    try {
        auto* s = new Shim_@M@{nullptr, nullptr, nullptr};
        s->ctx = new VerilatedContext;
        s->ctx->traceEverOn(true);
        s->top = new @PREFIX@(s->ctx, "TOP");
        Verilated::threadContextp(s->ctx);
        list_signals_@M@(s);
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

// 0: ok; 1: the model has executed $finish; 2: ok, and assertion messages wait
// (vlt_take_notes); -1: an error (vlt_last_error). One call per eval.
extern "C" int vlt_@M@_eval(void* p) {
    auto* s = static_cast<Shim_@M@*>(p);
    Verilated::threadContextp(s->ctx);
    try {
        s->top->eval();
        if (s->ctx->gotFinish()) return 1;
        return vlt_notes_pending() ? 2 : 0;
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

extern "C" int vlt_@M@_signal_count(void* p) { return (int)static_cast<Shim_@M@*>(p)->sigs.size(); }

// Signal i: its name (valid while the model lives), storage, width, element bytes, writable.
extern "C" void vlt_@M@_signal(void* p, int i, const char** name, void** data, uint32_t* width,
                                uint32_t* bytes, int* rw) {
    const Sig_@M@& g = static_cast<Shim_@M@*>(p)->sigs[(size_t)i];
    *name = g.name.c_str();
    *data = g.data;
    *width = g.width;
    *bytes = g.bytes;
    *rw = g.rw;
}

// The counts of the model's `cover property` statements, in the build's table order.
extern "C" void vlt_@M@_cover_counts(void* p, uint32_t* out, int n) {
    auto* s = static_cast<Shim_@M@*>(p);
    (void)s; (void)out; (void)n;
@COVER_BODY@}

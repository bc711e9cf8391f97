// Runtime overrides (verilated.cpp is compiled with -DVL_USER_FINISH/-DVL_USER_STOP/-DVL_USER_FATAL):
// $finish only sets gotFinish (the stock one calls exit(0) the second time); $stop and $fatal
// throw, and the shim's eval() catches at the extern "C" boundary (the stock ones abort()).
#include "verilated.h"
#include <cstdarg>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

static thread_local std::string vlt_error;

extern "C" void vlt_set_error(const char* msg) { vlt_error = msg ? msg : ""; }
extern "C" const char* vlt_last_error(void) { return vlt_error.c_str(); }

static std::string vlt_where(const char* filename, int linenum) {
    if (!filename || !filename[0]) return std::string();
    return std::string(filename) + ":" + std::to_string(linenum) + ": ";
}

void vl_finish(const char* filename, int linenum, const char* hier) VL_MT_UNSAFE {
    (void)filename; (void)linenum; (void)hier;
    Verilated::threadContextp()->gotFinish(true);
}

void vl_stop(const char* filename, int linenum, const char* hier) VL_MT_UNSAFE {
    (void)hier;
    Verilated::threadContextp()->gotError(true);
    Verilated::threadContextp()->gotFinish(true);
    throw std::runtime_error(vlt_where(filename, linenum) + "Verilog $stop");
}

void vl_fatal(const char* filename, int linenum, const char* hier, const char* msg) VL_MT_UNSAFE {
    (void)hier;
    Verilated::threadContextp()->gotError(true);
    Verilated::threadContextp()->gotFinish(true);
    throw std::runtime_error(vlt_where(filename, linenum) + (msg ? msg : "fatal"));
}

// VL_PRINTF (verilated.cpp is compiled with -DVL_PRINTF=vlt_printf): a failing assertion's
// message (`[T] %Warning: FILE:LINE: Assertion failed in HIER: TEXT`) is kept for the model
// that is evaluating on this thread to collect (its eval returns 2); anything else ($display)
// is printed as before.
static thread_local std::vector<std::string> vlt_notes;

extern "C" void vlt_printf(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(nullptr, 0, fmt, ap);
    va_end(ap);
    std::string s;
    if (n > 0) {
        s.resize((size_t)n + 1);
        vsnprintf(&s[0], (size_t)n + 1, fmt, ap2);
        s.resize((size_t)n);
    }
    va_end(ap2);
    if (s.find("Assertion failed in ") != std::string::npos && vlt_notes.size() < 4096) {
        vlt_notes.push_back(s);
    } else {
        fputs(s.c_str(), stdout);
    }
}

extern "C" int vlt_notes_pending(void) { return vlt_notes.empty() ? 0 : 1; }
extern "C" int vlt_note_count(void) { return (int)vlt_notes.size(); }
extern "C" const char* vlt_note(int i) { return vlt_notes[(size_t)i].c_str(); }
extern "C" void vlt_notes_clear(void) { vlt_notes.clear(); }

// Runtime overrides (verilated.cpp is compiled with -DVL_USER_FINISH/-DVL_USER_STOP/-DVL_USER_FATAL):
// $finish only sets gotFinish (the stock one calls exit(0) the second time); $stop and $fatal
// throw, and the shim's eval() catches at the extern "C" boundary (the stock ones abort()).
#include "verilated.h"
#include <stdexcept>
#include <string>

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

// ring.cpp - SystemC 2.3 reference model of trnsim's "kernel ring" benchmark.
//
// Models N clocked modules in a ring: module i reads from its input FIFO
// fifo[i] and writes to fifo[(i+1) % N], which is module (i+1)'s input.
// Each FIFO is an sc_fifo<uint64_t> of depth D, i.e. credit-based flow
// control with D credits. All modules share one sc_clock (period 1 ns,
// first posedge at t = 0) and are SC_METHODs statically sensitive to
// clk.pos() (methods are SystemC's fast path; no SC_THREADs).
//
// On every posedge a module moves at most one token: if its input has a
// token and its output has room, it reads it, adds 1 to the payload,
// writes it out and counts one hop. sc_fifo only updates num_available()
// and num_free() in the update phase, so a written token becomes readable,
// and a freed slot becomes writable, one cycle later: 1-cycle data and
// 1-cycle credit latency, independent of method evaluation order.
//
// T tokens are preloaded before sc_start: token j (payload j) goes into the
// input FIFO of module floor(j*N/T). After exactly C posedges we print one
// JSON line with the hop count, the sum of all payloads still in the FIFOs
// (must be T*(T-1)/2 + hops) and the CPU time of the sc_start call.
//
// Usage: ring --modules N --tokens T --depth D --cycles C

#include <systemc.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

static uint64_t g_edges = 0;  // posedges seen by module 0 (sanity check)

SC_MODULE(RingNode) {
    sc_in<bool> clk;
    sc_fifo_in<uint64_t> in;
    sc_fifo_out<uint64_t> out;
    uint64_t hops = 0;
    bool is_first = false;

    void step() {
        if (is_first) ++g_edges;
        if (in->num_available() > 0 && out->num_free() > 0) {
            uint64_t v;
            in->nb_read(v);
            out->nb_write(v + 1);
            ++hops;
        }
    }

    SC_CTOR(RingNode) {
        SC_METHOD(step);
        sensitive << clk.pos();
        dont_initialize();  // no extra call in the initialization phase
    }
};

static double now(clockid_t id) {
    timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage() {
    std::fprintf(stderr, "usage: ring --modules N --tokens T --depth D --cycles C\n");
    std::exit(2);
}

int sc_main(int argc, char* argv[]) {
    uint64_t n = 64, t = 16, d = 4, c = 1000000;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc) usage();
        uint64_t v = std::strtoull(argv[i + 1], nullptr, 10);
        if (!std::strcmp(argv[i], "--modules")) n = v;
        else if (!std::strcmp(argv[i], "--tokens")) t = v;
        else if (!std::strcmp(argv[i], "--depth")) d = v;
        else if (!std::strcmp(argv[i], "--cycles")) c = v;
        else usage();
    }
    if (n == 0 || d == 0 || c == 0) usage();

    sc_report_handler::set_actions(SC_INFO, SC_DO_NOTHING);  // quiet kernel
    sc_clock clk("clk", 1, SC_NS, 0.5, 0, SC_NS, true);  // posedges at 0,1,2,.. ns

    std::vector<sc_fifo<uint64_t>*> fifo(n);
    std::vector<RingNode*> node(n);
    for (uint64_t i = 0; i < n; ++i) {
        std::string fname = "fifo" + std::to_string(i);
        fifo[i] = new sc_fifo<uint64_t>(fname.c_str(), (int)d);
    }
    for (uint64_t i = 0; i < n; ++i) {
        std::string mname = "node" + std::to_string(i);
        node[i] = new RingNode(mname.c_str());
        node[i]->clk(clk);
        node[i]->in(*fifo[i]);
        node[i]->out(*fifo[(i + 1) % n]);
    }
    node[0]->is_first = true;

    for (uint64_t j = 0; j < t; ++j) {
        if (!fifo[j * n / t]->nb_write(j)) {
            std::fprintf(stderr, "too many tokens: fifo %" PRIu64 " overflows\n", j * n / t);
            return 2;
        }
    }

    // sc_start(C ns) runs every delta cycle at times < C ns and stops before
    // evaluating anything at exactly C ns (IEEE 1666-2011 SC_RUN_TO_TIME: the
    // edge at t = C is left pending). So the posedges executed are exactly
    // those at t = 0, 1, ..., C-1 ns; g_edges checks it. The first call also
    // finishes elaboration/initialization (microseconds for this design).
    double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
    sc_start(sc_time((double)c, SC_NS));
    double cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0, wall = now(CLOCK_MONOTONIC) - w0;

    if (g_edges != c) {
        std::fprintf(stderr, "edge count %" PRIu64 " != cycles %" PRIu64 "\n", g_edges, c);
        return 3;
    }
    uint64_t hops = 0, sum = 0, left = 0;
    for (uint64_t i = 0; i < n; ++i) {
        hops += node[i]->hops;
        uint64_t v;
        while (fifo[i]->nb_read(v)) { sum += v; ++left; }
    }
    if (left != t || sum != t * (t - 1) / 2 + hops) {
        std::fprintf(stderr, "conservation failed: %" PRIu64 " tokens, payload_sum %" PRIu64
                     ", expected %" PRIu64 "\n", left, sum, t * (t - 1) / 2 + hops);
        return 3;
    }
    std::printf("{\"model\":\"systemc\",\"modules\":%" PRIu64 ",\"tokens\":%" PRIu64
                ",\"depth\":%" PRIu64 ",\"cycles\":%" PRIu64 ",\"hops\":%" PRIu64
                ",\"payload_sum\":%" PRIu64 ",\"cpu_s\":%.6f,\"wall_s\":%.6f"
                ",\"hops_per_cpu_s\":%.1f}\n",
                n, t, d, c, hops, sum, cpu, wall, cpu > 0 ? hops / cpu : 0.0);
    return 0;
}

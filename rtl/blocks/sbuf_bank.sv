// sbuf_bank: one bank of a banked SBUF or PSUM at the SRAM timing model's port boundary
// (models/mem/src/sram/timing.rs and arbiter.rs): the bank's share of one cycle's arbitration.
// The memory's partitions are counted in G partition groups; each group of the bank has R read
// and W write ports. N request slots present this cycle's requests on this bank, in the
// memory's visiting (priority) order. Every access of the model covers one contiguous range of
// groups (arbiter.rs, its module doc), so a slot carries the range's first and last group
// number, GW = $clog2(G) bits each, rather than a G-bit mask.
//
//   req_valid[k], req_write[k], req_first[k*GW +: GW], req_last[k*GW +: GW]
//                 slot k's request this cycle: a read when req_write[k] is 0, needing one port
//                 of this bank in every partition group g with first <= g <= last (g < G)
//   grant[k]      combinational: slot k is served this cycle; 0 = refused (it retries later)
//   stalls        registered: refused requests counted since reset (the model's
//                 bank_stall_cycles[bank]: one per refused request per cycle)
//
// Arbitration (the model's PortUse::try_take, one bank of it): slots are visited in index
// order 0..N-1. A valid slot is granted iff every group in its range has had fewer than R
// (a read) or W (a write) grants so far this cycle in that direction; a granted slot takes one
// port of its direction in each of its groups; a refused slot takes none, not even in the
// groups that had room (all or nothing). Reads and writes use separate ports. A valid slot
// whose range covers no group (first > last, or first >= G) is granted and takes nothing.
// Invalid slots are ignored (their write, first and last bits mean nothing).
//
// Stall counter: each non-reset cycle adds the number of refused valid slots (0..N); it wraps
// modulo 2^32.
//
// Reset is synchronous, active high: no slot is granted in a reset cycle, and stalls is 0 from
// the next cycle. G >= 2 (GW >= 1), N * GW <= 128 (the harness's port width: N = 32 slots of
// G = 16 groups fit) and N <= 32 (the Rust model's). Lines tagged `// MUT:` are targets of
// scripts/mutate.sh.
module sbuf_bank #(
    parameter int N = 32,
    parameter int G = 16,
    parameter int R = 2,
    parameter int W = 2
) (
    input  logic                   clk,
    input  logic                   rst,
    input  logic [          N-1:0] req_valid,
    input  logic [          N-1:0] req_write,
    input  logic [N*$clog2(G)-1:0] req_first,
    input  logic [N*$clog2(G)-1:0] req_last,
    output logic [          N-1:0] grant,
    output logic [           31:0] stalls
);
  localparam int GW = $clog2(G);

  logic [31:0] cnt;
  logic [31:0] refused;

  // Grants, in slot order, and the number of refused valid slots.
  always_comb begin
    int used_r[G];
    int used_w[G];
    logic [G-1:0] room;
    logic [G-1:0] need;
    logic [GW-1:0] first;
    logic [GW-1:0] last;
    logic fits;
    grant = '0;
    refused = '0;
    room = '0;
    need = '0;
    first = '0;
    last = '0;
    fits = 1'b0;
    for (int g = 0; g < G; g++) begin
      used_r[g] = 0;
      used_w[g] = 0;
    end
    for (int k = 0; k < N; k++) begin
      if (req_valid[k] && !rst) begin  // MUT:rstgrant
        first = req_first[k*GW+:GW];
        last  = req_last[k*GW+:GW];
        // need[g]: slot k needs group g; room[g]: group g of this bank has a port left in
        // slot k's direction.
        for (int g = 0; g < G; g++) need[g] = g >= 32'(first) && g <= 32'(last);  // MUT:range
        for (int g = 0; g < G; g++) room[g] = req_write[k] ? used_w[g] < W : used_r[g] < R;  // MUT:rports
        fits = (need & ~room) == '0;  // MUT:first
        for (int g = 0; g < G; g++) begin
          if (need[g] && fits) begin  // MUT:partial
            if (req_write[k]) used_w[g]++;  // MUT:wtake
            else used_r[g]++;
          end
        end
        if (fits) grant[k] = 1'b1;
        else refused = refused + 1;  // MUT:wstall
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) cnt <= '0;  // MUT:reset
    else cnt <= cnt + refused;  // MUT:count
  end

  assign stalls = cnt;

  // Invariants, kept on by the build (--assert): grants go to valid slots only, and no group's
  // ports are over-granted in either direction (ranges re-read from the inputs).
  logic over;
  always_comb begin
    int nr, nw;
    over = 1'b0;
    for (int g = 0; g < G; g++) begin
      nr = 0;
      nw = 0;
      for (int k = 0; k < N; k++) begin
        if (grant[k] && g >= 32'(req_first[k*GW+:GW]) && g <= 32'(req_last[k*GW+:GW])) begin
          if (req_write[k]) nw++;
          else nr++;
        end
      end
      if (nr > R || nw > W) over = 1'b1;
    end
  end
  a_grant_only_valid: assert property (@(posedge clk) (grant & ~req_valid) == '0);
  a_ports_bounded: assert property (@(posedge clk) disable iff (rst) !over);
endmodule

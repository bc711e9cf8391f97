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
// The port use is kept as R + 1 (W + 1) group masks, level i holding the groups with more than
// i grants, so a slot costs a few G-bit operations rather than a loop over its groups.
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
  // Port use this cycle as levels of group masks: rl[i] holds the groups that have granted more
  // than i reads so far (wl likewise for writes); level R (W) would hold a group over-granted.
  logic [R:0][G-1:0] rl;
  logic [W:0][G-1:0] wl;
  logic over;

  // Grants, in slot order, and the number of refused valid slots.
  always_comb begin
    logic [G-1:0] need, room, take, take_r, take_w;
    logic [G:0] above;
    logic fits;
    grant = '0;
    refused = '0;
    for (int i = 0; i <= R; i++) rl[i] = '0;
    for (int i = 0; i <= W; i++) wl[i] = '0;
    for (int k = 0; k < N; k++) begin
      // need: the groups first..=last of slot k (none when first > last).
      above = {(G + 1) {1'b1}} << (32'(req_last[k*GW+:GW]) + 1);  // MUT:range
      need = ({G{1'b1}} << req_first[k*GW+:GW]) & ~above[G-1:0];
      // room: the groups with a port left in slot k's direction.
      room = req_write[k] ? ~wl[W-1] : ~rl[R-1];  // MUT:rports
      fits = (need & ~room) == '0;  // MUT:first
      take = fits ? need : '0;  // MUT:partial
      if (!req_valid[k] || rst) take = '0;
      take_r = req_write[k] ? '0 : take;  // MUT:wtake
      take_w = req_write[k] ? take : '0;
      for (int i = R; i > 0; i--) rl[i] = rl[i] | (rl[i-1] & take_r);
      rl[0] = rl[0] | take_r;
      for (int i = W; i > 0; i--) wl[i] = wl[i] | (wl[i-1] & take_w);
      wl[0] = wl[0] | take_w;
      if (req_valid[k] && !rst) begin  // MUT:rstgrant
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
  assign over = (rl[R] | wl[W]) != '0;

  // Invariants, kept on by the build (--assert): grants go to valid slots only, and no group's
  // ports are over-granted in either direction (nothing reached level R or W).
  a_grant_only_valid: assert property (@(posedge clk) (grant & ~req_valid) == '0);
  a_ports_bounded: assert property (@(posedge clk) disable iff (rst) !over);
endmodule

// link_fifo: the receive buffer of a credit-based kernel link (models/kernel/src/link.rs).
//
// The sender starts with DEPTH credits and spends one per message; this buffer returns one
// credit (a one-cycle `credit_ret` pulse, registered: the cycle after the pop) for every
// message the receiver takes. First-word fall-through: `out_data` shows the oldest message
// whenever `out_valid` is high, and is undefined (don't care) otherwise.
//
//   in_valid/in_data ──► [ DEPTH x WIDTH ring ] ──► out_valid/out_data
//   in_ready (= !full) ◄─┘        count        └──◄ out_ready      credit_ret ──► sender
//
// A push needs in_valid && in_ready; a pop needs out_valid && out_ready; both may happen in
// one cycle, also when full (the pop frees no slot within the cycle: in_ready stays low).
// Reset is synchronous and active high; it empties the buffer and drops a pending credit.
// DEPTH need not be a power of two. Lines tagged `// MUT:` are targets of scripts/mutate.sh.
module link_fifo #(
    parameter int WIDTH = 64,
    parameter int DEPTH = 4,
    localparam int CW = $clog2(DEPTH + 1),
    localparam int PW = (DEPTH > 1) ? $clog2(DEPTH) : 1
) (
    input  logic             clk,
    input  logic             rst,
    input  logic             in_valid,
    input  logic [WIDTH-1:0] in_data,
    output logic             in_ready,
    output logic             out_valid,
    output logic [WIDTH-1:0] out_data,
    input  logic             out_ready,
    output logic             credit_ret,
    output logic [CW-1:0]    count
);
  logic [WIDTH-1:0] mem[DEPTH];
  logic [PW-1:0] rd_ptr, wr_ptr;
  logic [CW-1:0] cnt;

  function automatic logic [PW-1:0] next_ptr(input logic [PW-1:0] p);
    return (p == PW'(DEPTH - 1)) ? '0 : p + 1'b1;
  endfunction

  wire full = (cnt == CW'(DEPTH));  // MUT:full
  wire empty = (cnt == '0);
  wire push = in_valid && in_ready;
  wire pop = out_valid && out_ready;

  assign in_ready = !full;
  assign out_valid = !empty;
  assign out_data = mem[rd_ptr];  // MUT:order
  assign count = cnt;

  always_ff @(posedge clk) begin
    if (rst) begin
      rd_ptr <= '0;
      wr_ptr <= '0;
      cnt <= '0;  // MUT:reset
      credit_ret <= 1'b0;
    end else begin
      if (push) mem[wr_ptr] <= in_data;  // MUT:write
      if (push) wr_ptr <= next_ptr(wr_ptr);
      if (pop) rd_ptr <= next_ptr(rd_ptr);
      cnt <= cnt + CW'(push) - CW'(pop);
      credit_ret <= pop;  // MUT:credit
    end
  end

  // Invariants, kept on by the build (--assert): a failure stops the run and `trnsim diff`
  // reports it by its label, with the cycle and the last cycles of port values.
  a_count_bounded: assert property (@(posedge clk) disable iff (rst) cnt <= CW'(DEPTH));
  a_credit_follows_pop: assert property (@(posedge clk) disable iff (rst) credit_ret == $past(pop && !rst));
  // Cover properties, counted by `trnsim diff` (a pop from a full buffer; both ends at once).
  c_pop_when_full: cover property (@(posedge clk) disable iff (rst) full && pop);
  c_push_and_pop: cover property (@(posedge clk) disable iff (rst) push && pop);
endmodule

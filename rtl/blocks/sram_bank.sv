// sram_bank: one SRAM bank of an SBUF partition slice (models/mem/src/sram/), WORDS words of
// WIDTH bits with R read ports and W write ports shared by REQ requesters.
//
//   req_valid[k], req_write[k], req_addr[k*AW +: AW], req_wdata[k*WIDTH +: WIDTH]
//                 requester k's request this cycle (a read when req_write[k] is 0)
//   grant[k]      combinational: the request is served this cycle; 0 = refused, retry later
//   rvalid[k], rdata[k*WIDTH +: WIDTH]   registered: the data of k's read granted last cycle;
//                 rdata lanes are 0 while their rvalid is low (an AND at the output)
//   rr_ptr        the registered round-robin pointer: the requester with top priority
//
// Arbitration: requesters are visited in round-robin order starting at rr_ptr; a valid read is
// granted while fewer than R reads have been, a valid write while fewer than W writes have
// been; the rest are refused. If any request is refused, rr_ptr moves to the first refused
// requester (in visiting order), so it has top priority next cycle (no starvation, as R, W >=
// 1); otherwise rr_ptr stays.
//
// Ordering within a cycle: writes take effect at the clock edge, write-before-read: a read
// granted in the same cycle as a write to its address returns the written data. Two writes
// to one address in one cycle: the later in visiting order wins (for the memory and for
// same-cycle reads alike).
//
// Reset is synchronous, active high: no requests are granted in a reset cycle; rr_ptr, rvalid
// and (a modelling convenience, so that reads of unwritten words are defined) all words are
// zeroed. WORDS must be a power of two; REQ >= 2. Lines tagged `// MUT:` are targets of
// scripts/mutate.sh.
module sram_bank #(
    parameter int WORDS = 64,
    parameter int WIDTH = 32,
    parameter int R = 2,
    parameter int W = 2,
    parameter int REQ = 4,
    localparam int AW = $clog2(WORDS),
    localparam int PW = $clog2(REQ)
) (
    input  logic                 clk,
    input  logic                 rst,
    input  logic [      REQ-1:0] req_valid,
    input  logic [      REQ-1:0] req_write,
    input  logic [   REQ*AW-1:0] req_addr,
    input  logic [REQ*WIDTH-1:0] req_wdata,
    output logic [      REQ-1:0] grant,
    output logic [      REQ-1:0] rvalid,
    output logic [REQ*WIDTH-1:0] rdata,
    output logic [       PW-1:0] rr_ptr
);
  logic [WIDTH-1:0] mem[WORDS];
  logic [PW-1:0] ptr, ptr_nx;
  logic [REQ-1:0] rv;
  logic [WIDTH-1:0] rd[REQ], rd_nx[REQ];

  function automatic int nth(input logic [PW-1:0] start, input int o);
    return (32'(start) + o) % REQ;
  endfunction

  // Grants and the next pointer.
  always_comb begin
    int k, nr, nw;
    logic refused;
    grant = '0;
    nr = 0;
    nw = 0;
    refused = 1'b0;
    ptr_nx = ptr;
    for (int o = 0; o < REQ; o++) begin
      k = nth(ptr, o);
      if (req_valid[k] && !rst) begin
        if (req_write[k] ? nw < W : nr < R) begin  // MUT:ports
          grant[k] = 1'b1;
          if (req_write[k]) nw++;
          else nr++;
        end else if (!refused) begin
          refused = 1'b1;
          ptr_nx  = PW'(k);
        end
      end
    end
  end

  // Read data, write-before-read: later writes in visiting order override earlier ones.
  always_comb begin
    int j;
    for (int k = 0; k < REQ; k++) begin
      rd_nx[k] = mem[req_addr[k*AW+:AW]];
      for (int o = 0; o < REQ; o++) begin
        j = nth(ptr, o);
        if (grant[j] && req_write[j] && req_addr[j*AW+:AW] == req_addr[k*AW+:AW])  // MUT:wfirst
          rd_nx[k] = req_wdata[j*WIDTH+:WIDTH];
      end
    end
  end

  always_ff @(posedge clk) begin
    int j;
    if (rst) begin
      ptr <= '0;  // MUT:reset
      rv  <= '0;
      for (int a = 0; a < WORDS; a++) mem[a] <= '0;
    end else begin
      ptr <= ptr_nx;  // MUT:ptr
      for (int o = 0; o < REQ; o++) begin  // MUT:wlast
        j = nth(ptr, o);
        if (grant[j] && req_write[j]) mem[req_addr[j*AW+:AW]] <= req_wdata[j*WIDTH+:WIDTH];
      end
      for (int k = 0; k < REQ; k++) begin
        rv[k] <= grant[k] && !req_write[k];
        rd[k] <= rd_nx[k];
      end
    end
  end

  always_comb begin
    for (int k = 0; k < REQ; k++) rdata[k*WIDTH+:WIDTH] = rv[k] ? rd[k] : '0;
    rvalid = rv;
    rr_ptr = ptr;
  end
endmodule

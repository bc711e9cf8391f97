// islip_arbiter: the switch crossbar arbiter (models/fabric/src/switch/arbiter/), one
// request-grant-accept arbitration per clock, ITER iterations unrolled in combinational logic.
//
//   req[i*N + j]  input i requests output j (the VOQ (i, j) has a cell it may send now)
//   match_valid[i], match_out[i*W +: W]   input i is connected to output match_out (0 if not)
//   grant_ptr[j*W +: W]   output j's grant pointer (registered), accept_ptr[i*W +: W] input i's
//
// Each iteration: every free output grants the requesting free input next at or after its
// grant pointer; every input accepts the granting output next at or after its accept pointer.
// Pointers move one beyond the partner, only in the first iteration:
//   MODE 0 (iSLIP, McKeown 1999): grant pointer on an accepted grant, accept pointer on accept
//   MODE 1 (RRM):                 grant pointer on every grant, accept pointer on accept
// As in the Rust arbiter (RoundRobinPointers::run), iterations after the first see the pointers
// as the first iteration moved them. The registered ones would give the same matching: a moved
// pointer belongs to a port matched in the first iteration (which takes no further part) or,
// in RRM, to an output whose grant was refused, and it then skips only inputs that were not
// eligible (the scripts/mutate.sh run that planted this change found no difference).
//
// The matching is combinational (valid in the cycle of `req`); the pointers take their new
// values at the clock edge. Reset is synchronous, active high, and zeroes the pointers; the
// matching during a reset cycle is computed as usual (from the old pointers). N >= 2; N need
// not be a power of two. Lines tagged `// MUT:` are targets of scripts/mutate.sh.
module islip_arbiter #(
    parameter int N = 4,
    parameter int ITER = 1,
    parameter int MODE = 0,
    localparam int W = $clog2(N)
) (
    input  logic           clk,
    input  logic           rst,
    input  logic [N*N-1:0] req,
    output logic [  N-1:0] match_valid,
    output logic [N*W-1:0] match_out,
    output logic [N*W-1:0] grant_ptr,
    output logic [N*W-1:0] accept_ptr
);
  logic [W-1:0] gptr[N], aptr[N];  // registered pointers
  logic [W-1:0] gptr_nx[N], aptr_nx[N];  // as the first iteration leaves them

  function automatic logic [W-1:0] inc(input logic [W-1:0] p);
    return (32'(p) == N - 1) ? '0 : p + 1'b1;
  endfunction

  // {found, index}: the first set bit of v at or after start, wrapping around.
  function automatic logic [W:0] rr_pick(input logic [N-1:0] v, input logic [W-1:0] start);
    logic [W:0] r;
    int idx;
    r = '0;
    for (int k = N - 1; k >= 0; k--) begin
      idx = 32'(start) + k;  // MUT:rrstart
      if (idx >= N) idx -= N;
      if (v[idx]) r = {1'b1, W'(idx)};
    end
    return r;
  endfunction

  always_comb begin
    logic [N-1:0] free_in, free_out, col;
    logic [N-1:0] gnt[N];  // gnt[i][j]: output j grants input i
    logic [W-1:0] g[N], a[N];
    logic [W:0] p;
    free_in = '1;
    free_out = '1;
    match_valid = '0;
    match_out = '0;
    g = gptr;
    a = aptr;
    for (int it = 0; it < ITER; it++) begin
      for (int i = 0; i < N; i++) gnt[i] = '0;
      for (int j = 0; j < N; j++) begin
        for (int i = 0; i < N; i++) col[i] = req[i*N+j];
        p = rr_pick(col & free_in, g[j]);  // MUT:gfree
        if (free_out[j] && p[W]) begin
          gnt[p[W-1:0]][j] = 1'b1;
          if (MODE == 1 && it == 0) g[j] = inc(p[W-1:0]);
        end
      end
      for (int i = 0; i < N; i++) begin
        p = rr_pick(gnt[i], a[i]);
        if (p[W]) begin
          match_valid[i] = 1'b1;
          match_out[i*W+:W] = p[W-1:0];
          free_in[i] = 1'b0;
          free_out[p[W-1:0]] = 1'b0;
          if (it == 0) begin  // MUT:first
            a[i] = inc(p[W-1:0]);
            if (MODE == 0) g[p[W-1:0]] = inc(W'(i));  // MUT:gptr
          end
        end
      end
    end
    gptr_nx = g;
    aptr_nx = a;
  end

  always_ff @(posedge clk) begin
    for (int k = 0; k < N; k++) begin
      if (rst) begin
        gptr[k] <= '0;
        aptr[k] <= '0;  // MUT:reset
      end else begin
        gptr[k] <= gptr_nx[k];
        aptr[k] <= aptr_nx[k];
      end
    end
  end

  always_comb begin
    for (int k = 0; k < N; k++) begin
      grant_ptr[k*W+:W] = gptr[k];
      accept_ptr[k*W+:W] = aptr[k];
    end
  end
endmodule

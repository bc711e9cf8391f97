// systolic_tile: a weight-stationary systolic-array tile of ROWS x COLS processing elements
// (PEs), BF16 x BF16 products accumulated in FP32, bit-exact with the NeuronCore model's
// functional mode (models/core/src/numeric/reference.rs matmul_ref: each product rounded to
// f32, then added to the partial sum with one f32 rounding, k = 0, 1, ..., K-1 in order,
// starting from +0; round to nearest even, subnormals kept, no FMA).
//
//   w_load, w_row, w_data[c*16 +: 16]   write row w_row of the *shadow* weights (one BF16 per
//                 column); ignored when w_row >= ROWS
//   w_swap        copy the shadow weights (including this cycle's w_load) into the active
//                 weights at the clock edge, all PEs at once
//   a_valid[r], a_data[r*16 +: 16]      the moving (activation) element of row r this cycle.
//                 Skewed as in a real array, by the caller: element k of a vector entering at
//                 cycle t is presented on row k at cycle t + k.
//   out_valid[c]  registered: column c's sum is on psum (valid at t + ROWS + c for the vector
//                 that entered at t)
//   psum_lo[c*32 +: 32]            FP32 sum of columns 0 .. COLS/2 - 1
//   psum_hi[(c-COLS/2)*32 +: 32]   FP32 sum of columns COLS/2 .. COLS - 1
//                 (two ports because the diff harness carries at most 128 bits per port); a
//                 column's lane is 0 while its out_valid is low; every NaN is 0x7FC00000.
//
// PE (r, c) holds active weight W[r][c]. Each cycle it takes the activation from its left
// (row input for c = 0) and the partial sum from above (+0 for r = 0), passes the activation
// right and registers psum_above + W[r][c] * act below, valid when both inputs were valid.
// Column c's bottom PE drives out_valid[c] / its psum lane, so column c of a vector x is
// sum_k W[k][c] * x[k] in k order: stationary.T @ moving with stationary = W (K = ROWS x M =
// COLS), as the tensor engine's matmul.
//
// NaN: any NaN result is the canonical quiet NaN 0x7FC00000 (Rust and IEEE 754 leave payloads
// unspecified, so the model canonicalises too); 0 x inf and inf - inf are NaN; overflow is inf.
// Reset is synchronous, active high: clears weights (both copies) and every valid.
// ROWS, COLS 1..8 (COLS even, >= 2). Lines tagged `// MUT:` are targets of scripts/mutate.sh.

module systolic_pe (
    input  logic        clk,
    input  logic        rst,
    input  logic [15:0] w,
    input  logic [15:0] a_in,
    input  logic        av_in,
    input  logic [31:0] p_in,
    input  logic        pv_in,
    output logic [15:0] a_q,
    output logic        av_q,
    output logic [31:0] p_q,
    output logic        pv_q
);
  /*verilator no_inline_module*/
  localparam logic [31:0] QNAN = 32'h7fc0_0000;
  localparam logic [30:0] INF = 31'h7f80_0000;

  // BF16 x BF16, rounded to FP32 (exact unless the result is subnormal or overflows).
  function automatic logic [31:0] mul_bf16(input logic [15:0] a, input logic [15:0] b);
    logic s, an, bn, ai, bi, az, bz, up;
    logic [7:0] ea, eb;
    logic [31:0] sa, sb, p, q, rem, half;
    int xa, xb, msb, e, sh;
    s = a[15] ^ b[15];
    ea = a[14:7];
    eb = b[14:7];
    an = ea == 8'hff && a[6:0] != 0;
    bn = eb == 8'hff && b[6:0] != 0;
    ai = ea == 8'hff && a[6:0] == 0;
    bi = eb == 8'hff && b[6:0] == 0;
    az = ea == 0 && a[6:0] == 0;
    bz = eb == 0 && b[6:0] == 0;
    if (an || bn || (ai && bz) || (bi && az)) return QNAN;
    if (ai || bi) return {s, INF};
    if (az || bz) return {s, 31'b0};
    sa = {24'b0, ea != 0, a[6:0]};
    sb = {24'b0, eb != 0, b[6:0]};
    xa = ea == 0 ? 1 : 32'(ea);
    xb = eb == 0 ? 1 : 32'(eb);
    p = sa * sb;
    msb = 0;
    for (int i = 0; i < 16; i++) if (p[i]) msb = i;
    e = msb + xa + xb - 141;
    if (e >= 255) return {s, INF};
    if (e >= 1) return {s, 8'(e), 23'(p << (23 - msb))};
    sh = 119 - xa - xb;  // MUT:ftz
    if (sh <= 0) return {s, 31'(p << (-sh))};
    if (sh > 20) sh = 20;
    q = p >> sh;
    rem = p & ((32'd1 << sh) - 1);
    half = 32'd1 << (sh - 1);
    up = rem > half || (rem == half && q[0]);
    return {s, 31'(q + 32'(up))};
  endfunction

  // FP32 + FP32, round to nearest even, subnormals kept.
  function automatic logic [31:0] add_f32(input logic [31:0] a, input logic [31:0] b);
    logic [31:0] big, sml, sg, ss, bv, sv, al, v, mant, bits;
    logic sub, s;
    int x, xs, d, lz, sh;
    logic [2:0] lo3;
    if (a[30:0] > INF || b[30:0] > INF) return QNAN;
    if (a[30:0] == INF && b[30:0] == INF && a[31] != b[31]) return QNAN;  // MUT:infnan
    if (a[30:0] == INF) return a;
    if (b[30:0] == INF) return b;
    if (a[30:0] >= b[30:0]) begin
      big = a;
      sml = b;
    end else begin
      big = b;
      sml = a;
    end
    sub = a[31] ^ b[31];
    s = big[31];
    x = big[30:23] == 0 ? 1 : 32'(big[30:23]);
    xs = sml[30:23] == 0 ? 1 : 32'(sml[30:23]);
    sg = {8'b0, big[30:23] != 0, big[22:0]};
    ss = {8'b0, sml[30:23] != 0, sml[22:0]};
    d = x - xs;
    bv = sg << 3;
    sv = ss << 3;
    if (d >= 27) al = {31'b0, sv != 0};
    else al = (sv >> d) | {31'b0, (sv & ((32'd1 << d) - 1)) != 0};  // MUT:sticky
    if (!sub) begin
      v = bv + al;
      if (v[27]) begin
        v = (v >> 1) | {31'b0, v[0]};
        x = x + 1;
      end
    end else begin
      v = bv - al;
      if (v == 0) return 32'h0;  // MUT:zsign
      lz = 0;
      for (int i = 0; i <= 26; i++) if (v[i]) lz = 26 - i;
      sh = lz < x - 1 ? lz : x - 1;
      v = v << sh;
      x = x - sh;
    end
    lo3  = v[2:0];
    mant = v >> 3;
    if (lo3 > 4 || (lo3 == 4 && mant[0])) mant = mant + 1;  // MUT:rne
    if (x >= 255) return {s, INF};
    bits = (32'(x - 1) << 23) + mant;
    if (bits >= 32'h7f80_0000) return {s, INF};
    return {s, bits[30:0]};
  endfunction

  always_ff @(posedge clk) begin
    if (rst) begin
      av_q <= 1'b0;
      pv_q <= 1'b0;
      a_q  <= '0;
      p_q  <= '0;
    end else begin
      a_q  <= a_in;
      av_q <= av_in;
      pv_q <= av_in && pv_in;  // MUT:pvalid
      p_q  <= add_f32(p_in, mul_bf16(w, a_in));
    end
  end
endmodule

module systolic_tile #(
    parameter int ROWS = 8,
    parameter int COLS = 8,
    localparam int RW = ROWS > 1 ? $clog2(ROWS) : 1,
    localparam int CL = COLS / 2,
    localparam int CH = COLS - COLS / 2
) (
    input  logic               clk,
    input  logic               rst,
    input  logic               w_load,
    input  logic [     RW-1:0] w_row,
    input  logic [COLS*16-1:0] w_data,
    input  logic               w_swap,
    input  logic [   ROWS-1:0] a_valid,
    input  logic [ROWS*16-1:0] a_data,
    output logic [   COLS-1:0] out_valid,
    output logic [  CL*32-1:0] psum_lo,
    output logic [  CH*32-1:0] psum_hi
);
  logic [15:0] ws[ROWS][COLS], w[ROWS][COLS];
  logic [15:0] a_q[ROWS][COLS];
  logic av_q[ROWS][COLS];
  logic [31:0] p_q[ROWS][COLS];
  logic pv_q[ROWS][COLS];

  always_ff @(posedge clk) begin
    for (int r = 0; r < ROWS; r++) begin
      for (int c = 0; c < COLS; c++) begin
        if (rst) begin
          ws[r][c] <= '0;
          w[r][c]  <= '0;
        end else begin
          if (w_load && 32'(w_row) == r) ws[r][c] <= w_data[c*16+:16];
          if (w_swap) w[r][c] <= (w_load && 32'(w_row) == r) ? w_data[c*16+:16] : ws[r][c];  // MUT:swap
        end
      end
    end
  end

  // Each PE's inputs: the row input or its left neighbour, +0 / valid or the PE above.
  logic [15:0] a_in[ROWS][COLS];
  logic av_in[ROWS][COLS];
  logic [31:0] p_in[ROWS][COLS];
  logic pv_in[ROWS][COLS];
  always_comb begin
    for (int r = 0; r < ROWS; r++) begin
      a_in[r][0]  = a_data[r*16+:16];
      av_in[r][0] = a_valid[r];
      for (int c = 1; c < COLS; c++) begin
        a_in[r][c]  = a_q[r][c-1];
        av_in[r][c] = av_q[r][c-1];
      end
    end
    for (int c = 0; c < COLS; c++) begin
      p_in[0][c]  = 32'h0;
      pv_in[0][c] = 1'b1;
      for (int r = 1; r < ROWS; r++) begin
        p_in[r][c]  = p_q[r-1][c];
        pv_in[r][c] = pv_q[r-1][c];
      end
    end
  end

  for (genvar r = 0; r < ROWS; r++) begin : g_row
    for (genvar c = 0; c < COLS; c++) begin : g_col
      systolic_pe pe (
          .clk,
          .rst,
          .w(w[r][c]),
          .a_in(a_in[r][c]),
          .av_in(av_in[r][c]),
          .p_in(p_in[r][c]),
          .pv_in(pv_in[r][c]),
          .a_q(a_q[r][c]),
          .av_q(av_q[r][c]),
          .p_q(p_q[r][c]),
          .pv_q(pv_q[r][c])
      );
    end
  end

  always_comb begin
    for (int c = 0; c < COLS; c++) out_valid[c] = pv_q[ROWS-1][c];
    for (int c = 0; c < CL; c++) psum_lo[c*32+:32] = pv_q[ROWS-1][c] ? p_q[ROWS-1][c] : '0;
    for (int c = 0; c < CH; c++) psum_hi[c*32+:32] = pv_q[ROWS-1][CL+c] ? p_q[ROWS-1][CL+c] : '0;
  end
endmodule

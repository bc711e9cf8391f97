// hbm_bank: the timing state machine of one HBM bank, as trnsim-mem's controller sees it:
// bank state plus, for every command, whether it may issue this cycle (bank state, open row and
// every timing rule of models/mem/src/hbm/timing.rs `constraints` whose scope contains the
// bank itself: Bank, bank Group and pseudo-channel rows; tFAW cannot bind one bank, as tRC >
// tFAW / 3). Parameters are a speed grade's TimingParams in CK cycles (build.rs passes the
// hbm3-6400 and hbm2-2000 presets).
//
//   cmd      this cycle's command: 0 NOP, 1 ACT, 2 RD, 3 WR, 4 PRE, 5 REFPB, 6 RDA, 7 WRA
//   row      the row (ACT: to open; RD/WR/RDA/WRA: must be the open row)
//   legal[k] combinational: command k would be legal now (at `row` for column commands);
//            legal[0] (NOP) is always 1
//   violation, vcode  combinational: cmd is illegal; why: 1 bank state (ACT/REFPB to an open
//            bank, a column command to a closed one), 2 wrong row, 3 timing (too early);
//            0 when legal. An illegal command is ignored (the bank does not change).
//   state    registered: 0 IDLE, 1 ACTIVATING (ACT less than max(tRCDRD, tRCDWR) ago),
//            2 ACTIVE, 3 PRECHARGING (within the ACT-to-ACT distance of a PRE, RDA or WRA),
//            4 REFRESHING (within tRFCpb of a REFPB; takes precedence over PRECHARGING)
//   open_row registered: the open row, 0 while closed
//
// PRE to a closed bank is legal, a no-op for the state, but starts tRP and tPPD (as the
// controller's table treats it). RDA/WRA close the bank at issue. Timing is kept as one
// down-counter per following-command class (ACT, PRE, RD/RDA, WR/WRA, REFPB): cycles until it
// is legal; issuing command p at t sets class f's counter to max(counter - 1, D[p][f] - 1).
// Reset is synchronous, active high: closed, IDLE, every command timing-legal. Lines tagged
// `// MUT:` are targets of scripts/mutate.sh.
module hbm_bank #(
    parameter int ROW_BITS = 14,
    parameter int BL = 2,
    parameter int CWL = 10,
    parameter int RCD_RD = 31,
    parameter int RCD_WR = 15,
    parameter int RP = 26,
    parameter int RAS = 45,
    parameter int RC = 72,
    parameter int WR = 33,
    parameter int RTP = 9,
    parameter int CCD_S = 2,
    parameter int CCD_L = 4,
    parameter int RRD_S = 4,
    parameter int RRD_L = 5,
    parameter int WTR_S = 7,
    parameter int WTR_L = 10,
    parameter int RTW = 20,
    parameter int PPD = 2,
    parameter int RFC_PB = 320,
    parameter int RREFD = 8
) (
    input  logic                clk,
    input  logic                rst,
    input  logic [         2:0] cmd,
    input  logic [ROW_BITS-1:0] row,
    output logic [         7:0] legal,
    output logic                violation,
    output logic [         1:0] vcode,
    output logic [         2:0] state,
    output logic [ROW_BITS-1:0] open_row
);
  localparam int NOP = 0, ACT = 1, RD = 2, WRC = 3, PRE = 4, REFPB = 5, RDA = 6, WRA = 7;
  // Following-command classes.
  localparam int C_ACT = 0, C_PRE = 1, C_RD = 2, C_WR = 3, C_REF = 4;

  function automatic int max2(input int a, input int b);
    return a > b ? a : b;
  endfunction

  // The distances of timing.rs, same-bank view (max over the Bank, Group and PC rows).
  localparam int CCD = max2(max2(CCD_S, BL), CCD_L);
  localparam int WR_TO_RD = CWL + BL + max2(WTR_S, WTR_L);
  localparam int WR_TO_PRE = CWL + BL + WR;  // MUT:twr
  localparam int ACT_TO_ACT = max2(RC, max2(RRD_S, RRD_L));
  localparam int ACT_TO_REF = max2(RC, RRD_S);
  localparam int RDA_TO_ACT = RTP + RP;
  localparam int WRA_TO_ACT = WR_TO_PRE + RP;
  localparam int REF_TO_ACT = max2(RFC_PB, RREFD);
  localparam int RCD_MAX = max2(RCD_RD, RCD_WR);

  // D[p][f]: minimum distance from command p to a command of class f (0 = no rule).
  function automatic int gap(input int p, input int f);
    case (p)
      ACT: case (f)
          C_ACT: return ACT_TO_ACT;
          C_PRE: return RAS;
          C_RD: return RCD_RD;  // MUT:trcd
          C_WR: return RCD_WR;
          default: return ACT_TO_REF;
        endcase
      PRE: case (f)
          C_ACT: return RP;
          C_PRE: return PPD;
          C_REF: return RP;
          default: return 0;
        endcase
      RD, RDA: case (f)
          C_RD: return CCD;
          C_WR: return RTW;
          C_PRE: return p == RD ? RTP : 0;
          default: return p == RDA ? RDA_TO_ACT : 0;  // MUT:rda
        endcase
      WRC, WRA: case (f)
          C_WR: return CCD;
          C_RD: return WR_TO_RD;
          C_PRE: return p == WRC ? WR_TO_PRE : 0;
          default: return p == WRA ? WRA_TO_ACT : 0;
        endcase
      REFPB: return (f == C_ACT || f == C_REF) ? REF_TO_ACT : 0;
      default: return 0;
    endcase
  endfunction

  function automatic int cls(input int c);
    case (c)
      ACT: return C_ACT;
      PRE: return C_PRE;
      RD, RDA: return C_RD;
      WRC, WRA: return C_WR;
      default: return C_REF;
    endcase
  endfunction

  logic [15:0] wait_q[5];
  logic [15:0] act_cnt, pre_cnt, ref_cnt;
  logic is_open;
  logic [ROW_BITS-1:0] row_q;

  logic [2:0] code[8];
  always_comb begin
    for (int c = 0; c < 8; c++) begin
      code[c] = 0;
      if (c != NOP) begin
        if (wait_q[cls(c)] != 0) code[c] = 3;
        if ((c == RD || c == WRC || c == RDA || c == WRA) && is_open && row != row_q) code[c] = 2;
        if ((c == ACT || c == REFPB) && is_open) code[c] = 1;  // MUT:actopen
        if ((c == RD || c == WRC || c == RDA || c == WRA) && !is_open) code[c] = 1;
      end
      legal[c] = code[c] == 0;
    end
    vcode = code[cmd][1:0];
    violation = code[cmd] != 0;
    if (!is_open) state = ref_cnt != 0 ? 3'd4 : pre_cnt != 0 ? 3'd3 : 3'd0;
    else state = act_cnt != 0 ? 3'd1 : 3'd2;
    open_row = is_open ? row_q : '0;
  end

  function automatic logic [15:0] dec(input logic [15:0] v);
    return v == 0 ? v : v - 1;
  endfunction

  function automatic logic [15:0] bump(input logic [15:0] v, input int d);
    logic [15:0] a;
    a = dec(v);
    return d > 0 && 16'(d - 1) > a ? 16'(d - 1) : a;
  endfunction

  logic issue;
  assign issue = cmd != NOP && legal[cmd];  // MUT:ignore

  always_ff @(posedge clk) begin
    if (rst) begin
      for (int f = 0; f < 5; f++) wait_q[f] <= '0;
      act_cnt <= '0;
      pre_cnt <= '0;
      ref_cnt <= '0;
      is_open <= 1'b0;
      row_q   <= '0;
    end else begin
      for (int f = 0; f < 5; f++) wait_q[f] <= issue ? bump(wait_q[f], gap(32'(cmd), f)) : dec(wait_q[f]);
      act_cnt <= issue && cmd == ACT ? 16'(RCD_MAX - 1) : dec(act_cnt);
      pre_cnt <= issue && (cmd == PRE || cmd == RDA || cmd == WRA) ? bump(pre_cnt, gap(32'(cmd), C_ACT)) : dec(pre_cnt);
      ref_cnt <= issue && cmd == REFPB ? bump(ref_cnt, REF_TO_ACT) : dec(ref_cnt);  // MUT:refcnt
      if (issue && cmd == ACT) begin
        is_open <= 1'b1;
        row_q   <= row;
      end
      if (issue && (cmd == PRE || cmd == RDA || cmd == WRA)) is_open <= 1'b0;
    end
  end
endmodule

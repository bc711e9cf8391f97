// replay_buf: the go-back-N replay buffer of a link transmitter (PCIe Gen6 flit mode's link
// layer), with the rules of the fabric model's transmitter (models/fabric/src/link/tx.rs,
// `ReplayBuffer`): sequence numbers, ACK and NAK handling, the replay, the replay timer and
// the capacity that back-pressures new units.
//
//   new_valid/new_data ──► [ CAP units, oldest = head_seq ] ──► tx_valid/tx_seq/tx_data/tx_replay
//   new_take ◄──────────────┘   count, replaying      ▲          (lane_ready: the lanes take one)
//   dllp_valid/dllp_nak/dllp_seq (ACK / NAK) ─────────┘ drop acknowledged units, replay
//
// Every cycle, in this order:
//  1. a DLLP (dllp_valid): an ACK of s drops the units up to s; a NAK of s drops those up to
//     s - 1 and, if units remain, starts a replay from the oldest. Sequence numbers are SW bits
//     and wrap; s counts as "up to" when s - head_seq (mod 2^SW) < 2^(SW-1) (CAP must be
//     smaller), otherwise it is stale and drops nothing.
//  2. the replay timer: if units remain and no progress (a drop, a replay start, a unit entering
//     the empty buffer) happened for TMO cycles (and none in step 1), a replay starts
//     (timeout, one cycle).
//  3. if lane_ready: while replaying, the next held unit goes out again (tx_replay); the replay
//     ends after the newest. Otherwise, if the buffer has room and new_valid, the new unit gets
//     the next sequence number, goes out and is kept (new_take).
// Outputs are combinational except count and replaying (the state at the start of the cycle);
// tx_seq and tx_data are 0 when tx_valid is low. Reset is synchronous and active high: empty,
// sequence numbers from 0. Lines tagged `// MUT:` are targets of scripts/mutate.sh.
module replay_buf #(
    parameter int CAP = 16,
    parameter int SW = 10,
    parameter int DW = 16,
    parameter int TMO = 64,
    localparam int IW = (CAP > 1) ? $clog2(CAP) : 1,
    localparam int CB = $clog2(CAP + 1),
    localparam int AW = $clog2(TMO + 1)
) (
    input  logic          clk,
    input  logic          rst,
    input  logic          dllp_valid,
    input  logic          dllp_nak,
    input  logic [SW-1:0] dllp_seq,
    input  logic          lane_ready,
    input  logic          new_valid,
    input  logic [DW-1:0] new_data,
    output logic          new_take,
    output logic          tx_valid,
    output logic [SW-1:0] tx_seq,
    output logic [DW-1:0] tx_data,
    output logic          tx_replay,
    output logic [CB-1:0] count,
    output logic          replaying,
    output logic          timeout
);
  localparam int HALF = 1 << (SW - 1);

  logic [DW-1:0] mem[CAP];
  logic [IW-1:0] hp;  // slot of the oldest unit
  logic [CB-1:0] cnt;
  logic [SW-1:0] hs;  // its sequence number
  logic [IW-1:0] rp;  // next unit to replay (index from the oldest)
  logic rpl;
  logic [AW-1:0] age;  // cycles since the last progress, saturating at TMO

  function automatic logic [IW-1:0] slot(input int base, input int k);
    return IW'((base + k) % CAP);
  endfunction

  // After step 1 and 2: what remains, where the replay stands, and whether progress happened.
  int purge, cnt1, rp1;
  logic rpl1, prog, fire;
  logic [SW-1:0] d, hs1;
  logic [IW-1:0] hp1;
  always_comb begin
    d = dllp_seq - hs;
    purge = 0;
    if (dllp_valid && 32'(d) < HALF) begin  // MUT:stale
      if (dllp_nak) purge = 32'(d);
      else purge = 32'(d) + 1;  // MUT:ackthrough
      if (purge > 32'(cnt)) purge = 32'(cnt);
    end
    cnt1 = 32'(cnt) - purge;
    hp1 = slot(32'(hp), purge);
    hs1 = hs + SW'(purge);
    rp1 = 32'(rp) > purge ? 32'(rp) - purge : 0;  // MUT:rpshift
    rpl1 = rpl && cnt1 != 0;
    prog = purge != 0;
    if (dllp_valid && dllp_nak && cnt1 != 0) begin
      rpl1 = 1'b1;
      rp1  = 0;
      prog = 1'b1;
    end
    fire = cnt1 != 0 && !prog && 32'(age) >= TMO;
    if (fire) begin
      rpl1 = 1'b1;
      rp1  = 0;
    end
    timeout = fire;
    tx_valid = 1'b0;
    tx_replay = 1'b0;
    new_take = 1'b0;
    tx_seq = '0;
    tx_data = '0;
    if (lane_ready && rpl1) begin
      tx_valid = 1'b1;
      tx_replay = 1'b1;
      tx_seq = hs1 + SW'(rp1);
      tx_data = mem[slot(32'(hp1), rp1)];
    end else if (lane_ready && new_valid && cnt1 < CAP) begin  // MUT:cap
      tx_valid = 1'b1;
      new_take = 1'b1;
      tx_seq = hs1 + SW'(cnt1);
      tx_data = new_data;
    end
    count = cnt;
    replaying = rpl;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      hp  <= '0;
      cnt <= '0;
      hs  <= '0;  // MUT:reset
      rp  <= '0;
      rpl <= 1'b0;
      age <= '0;
    end else begin
      hp <= hp1;
      hs <= hs1;
      cnt <= CB'(cnt1 + int'(new_take));
      if (new_take) mem[slot(32'(hp1), cnt1)] <= new_data;
      if (tx_replay) begin
        rp  <= IW'(rp1 + 1);
        rpl <= rp1 + 1 < cnt1;  // MUT:rpend
      end else begin
        rp  <= IW'(rp1);
        rpl <= rpl1;
      end
      if (prog || fire || (new_take && cnt1 == 0)) age <= AW'(1);  // MUT:timer
      else if (32'(age) < TMO) age <= age + 1'b1;
    end
  end

  // Invariants, kept on by the build (--assert).
  a_count_bounded: assert property (@(posedge clk) disable iff (rst) 32'(cnt) <= CAP);
  a_replay_within_buffer: assert property (@(posedge clk) disable iff (rst) rpl |-> 32'(rp) < 32'(cnt));
  a_new_only_with_room: assert property (@(posedge clk) disable iff (rst) new_take |-> 32'(cnt1) < CAP);
endmodule

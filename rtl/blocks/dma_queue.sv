// dma_queue: the descriptor queues of one DMA engine and their arbiter, as the simulator's DMA
// block runs them (models/core/src/dma/engine.rs queues and ready mask, sched.rs Arbiter).
//
// Q FIFO queues of D descriptors each. A descriptor is one engine's part of a DMA command: a
// tag and the number of packets it moves (0: an empty or malformed part that moves nothing).
// It becomes eligible LAT cycles after it was enqueued (the start latency; every descriptor
// keeps its own count-down, so a descriptor that reaches the head late is eligible at once).
//
//   enq_valid/queue/tag/pkts ──► [ Q queues x D ] ──► head of each queue ──► ready[Q]
//   enq_ready (queue not full) ◄┘       count[Q]        │ eligible, pkts == 0 ──► empty_ret[Q]
//                                                       ▼
//                    start_ok ──► arbiter (round robin, or 4 priority classes) ──► start,
//                                 start_queue, start_tag, start_pkt (packet index), start_last
//
// Each cycle the engine says whether it may start a packet (start_ok, the engine's may_start);
// if so and some queue is ready (its head eligible with packets left), the arbiter picks one:
// QOS = 0, round robin over all queues from the pointer; QOS = 1, queue q is in class q % 4,
// the lowest class with a ready queue wins, round robin inside it (one pointer per class). The
// pointer of the winner's class moves to one past the winner. The head's next packet starts
// (start_pkt counts 0..pkts-1); with its last packet (start_last) the descriptor leaves the
// queue. A head that is eligible with 0 packets leaves the queue the same cycle (empty_ret),
// whatever start_ok. Outputs are combinational; start_* are 0 when start is low.
// Reset is synchronous and active high: queues empty, pointers 0. Lines tagged `// MUT:` are
// targets of scripts/mutate.sh.
module dma_queue #(
    parameter int Q = 16,
    parameter int D = 4,
    parameter int LAT = 8,
    parameter int QOS = 0,
    parameter int TW = 8,
    parameter int NW = 8,
    localparam int QW = (Q > 1) ? $clog2(Q) : 1,
    localparam int PW = (D > 1) ? $clog2(D) : 1,
    localparam int CW = $clog2(D + 1),
    localparam int LW = (LAT > 1) ? $clog2(LAT) : 1
) (
    input  logic            clk,
    input  logic            rst,
    input  logic            enq_valid,
    input  logic [  QW-1:0] enq_queue,
    input  logic [  TW-1:0] enq_tag,
    input  logic [  NW-1:0] enq_pkts,
    output logic            enq_ready,
    input  logic            start_ok,
    output logic            start,
    output logic [  QW-1:0] start_queue,
    output logic [  TW-1:0] start_tag,
    output logic [  NW-1:0] start_pkt,
    output logic            start_last,
    output logic [   Q-1:0] ready,
    output logic [   Q-1:0] empty_ret,
    output logic [Q*CW-1:0] count
);
  logic [TW-1:0] tag_m[Q][D];
  logic [NW-1:0] pkts_m[Q][D];
  logic [LW-1:0] wait_m[Q][D];
  logic [PW-1:0] head[Q];
  logic [CW-1:0] cnt[Q];
  logic [NW-1:0] nxt[Q];
  logic [QW-1:0] ptr[4];

  function automatic logic [PW-1:0] wrap(input int p);
    return PW'(p % D);
  endfunction

  function automatic int cls(input int q);
    return QOS != 0 ? q % 4 : 0;
  endfunction

  logic [Q-1:0] elig;
  logic found, over;
  int sel;
  logic [1:0] selc;
  always_comb begin
    for (int q = 0; q < Q; q++) begin
      elig[q] = cnt[q] != 0 && wait_m[q][head[q]] == 0;  // MUT:elig
      ready[q] = elig[q] && pkts_m[q][head[q]] != 0;
      empty_ret[q] = elig[q] && pkts_m[q][head[q]] == 0;
      count[q*CW+:CW] = cnt[q];
    end
    over = 1'b0;
    /* verilator lint_off CMPCONST */
    for (int q = 0; q < Q; q++) over = over || cnt[q] > CW'(D);
    /* verilator lint_on CMPCONST */
    found = 1'b0;
    sel = 0;
    selc = 0;
    for (int c = 0; c < 4; c++) begin
      for (int k = 0; k < Q; k++) begin
        int q;
        q = (32'(ptr[c]) + k) % Q;  // MUT:rrstart
        if (!found && ready[q] && cls(q) == c) begin  // MUT:class
          found = 1'b1;
          sel = q;
          selc = 2'(c);
        end
      end
    end
    start = start_ok && found;
    start_queue = start ? QW'(sel) : '0;
    start_tag = start ? tag_m[sel][head[sel]] : '0;
    start_pkt = start ? nxt[sel] : '0;
    start_last = start && (NW + 1)'(nxt[sel]) + 1 == (NW + 1)'(pkts_m[sel][head[sel]]);  // MUT:last
    enq_ready = 32'(enq_queue) < Q && cnt[enq_queue] != CW'(D);  // MUT:full
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      for (int q = 0; q < Q; q++) begin
        head[q] <= '0;
        cnt[q]  <= '0;  // MUT:reset
        nxt[q]  <= '0;
      end
      for (int c = 0; c < 4; c++) ptr[c] <= '0;
    end else begin
      for (int q = 0; q < Q; q++) begin
        logic pop, push;
        for (int d = 0; d < D; d++) wait_m[q][d] <= wait_m[q][d] == 0 ? '0 : wait_m[q][d] - 1'b1;
        pop  = (start && sel == q && start_last) || empty_ret[q];
        push = enq_valid && enq_ready && 32'(enq_queue) == q;
        if (start && sel == q) nxt[q] <= start_last ? '0 : nxt[q] + 1'b1;
        if (pop) head[q] <= wrap(32'(head[q]) + 1);
        if (push) begin
          tag_m[q][wrap(32'(head[q]) + 32'(cnt[q]))]  <= enq_tag;
          pkts_m[q][wrap(32'(head[q]) + 32'(cnt[q]))] <= enq_pkts;
          wait_m[q][wrap(32'(head[q]) + 32'(cnt[q]))] <= LW'(LAT - 1);  // MUT:lat
        end
        cnt[q] <= cnt[q] + CW'(push) - CW'(pop);
      end
      if (start) ptr[selc] <= QW'((sel + 1) % Q);  // MUT:ptr
    end
  end

  // Invariants, kept on by the build (--assert).
  a_start_only_when_ok: assert property (@(posedge clk) disable iff (rst) start |-> start_ok);
  a_start_from_a_ready_queue: assert property (@(posedge clk) disable iff (rst) start |-> ready[sel]);
  a_count_bounded: assert property (@(posedge clk) disable iff (rst) !over);
endmodule

// oot_fifo: a credit-based receive FIFO for a kernel link, written from scratch in another
// style than trnsim's link_fifo: a collapsing queue (entry 0 always holds the oldest message,
// a pop moves every entry down one) with a valid bit per entry, whose count is the number of
// valid entries. Its ports are link_fifo's, so it binds to any kernel link of depth DEPTH
// (`--rtl "SRC.PORT -> DST.PORT=oot_fifo"`) and is checked there against trnsim's own link.
//
// A push needs in_valid && in_ready, a pop out_valid && out_ready; both may happen in one
// cycle, also when full (the pop frees no entry within the cycle). `credit_ret` pulses the
// cycle after each pop. Synchronous active-high reset `rst`, clock `clk`.
// `OOT_FIFO_LATE_CREDIT (a define) plants a bug: the credit goes back two cycles after the
// pop instead of one (a pipeline register too many).
module oot_fifo #(
    parameter int WIDTH = 64,
    parameter int DEPTH = 4,
    localparam int CW = $clog2(DEPTH + 1)
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
    logic [WIDTH-1:0] q[DEPTH];
    logic [DEPTH-1:0] v;  // v[k]: entry k holds a message; the valid entries are 0..count-1
    logic [WIDTH-1:0] q_nx[DEPTH];
    logic [DEPTH-1:0] v_nx;

    always_comb begin
        count = '0;
        for (int k = 0; k < DEPTH; k++) count = count + CW'(v[k]);
    end

    assign in_ready = !v[DEPTH-1];
    assign out_valid = v[0];
    assign out_data = q[0];

    wire push = in_valid && in_ready;
    wire pop = out_valid && out_ready;

    // The next entries: shifted down one on a pop; a push lands in the first free entry
    // after the shift.
    always_comb begin
        for (int k = 0; k < DEPTH; k++) begin
            q_nx[k] = q[k];
            v_nx[k] = v[k];
            if (pop) begin
                q_nx[k] = (k + 1 < DEPTH) ? q[(k+1)%DEPTH] : q[k];
                v_nx[k] = (k + 1 < DEPTH) ? v[(k+1)%DEPTH] : 1'b0;
            end
            if (push && 32'(count) - 32'(pop) == k) begin
                q_nx[k] = in_data;
                v_nx[k] = 1'b1;
            end
        end
    end

`ifdef OOT_FIFO_LATE_CREDIT
    logic credit_d;
`endif
    always_ff @(posedge clk) begin
        if (rst) begin
            v <= '0;
            credit_ret <= 1'b0;
`ifdef OOT_FIFO_LATE_CREDIT
            credit_d <= 1'b0;
`endif
        end else begin
            for (int k = 0; k < DEPTH; k++) q[k] <= q_nx[k];
            v <= v_nx;
`ifdef OOT_FIFO_LATE_CREDIT
            credit_d <= pop;
            credit_ret <= credit_d;
`else
            credit_ret <= pop;
`endif
        end
    end

    // The valid entries are always a prefix (0..count-1): a hole would lose a message.
    a_valid_is_a_prefix: assert property (@(posedge clk) disable iff (rst) (v & (v + 1'b1)) == '0);
endmodule

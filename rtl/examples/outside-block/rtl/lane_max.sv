// lane_max: the largest of LANES 8-bit lanes, given as an unpacked array port, and the lowest
// lane holding it; registered, with a valid. Synchronous active-high reset `rst`, clock `clk`.
// `LANE_MAX_SKIP_LAST (a define) plants a bug: the last lane is never looked at.
module lane_max #(
    parameter int LANES = 4,
    localparam int IW = $clog2(LANES)
) (
    input  logic          clk,
    input  logic          rst,
    input  logic          valid_i,
    input  logic [7:0]    lanes_i [LANES],
    output logic          valid_o,
    output logic [7:0]    max_o,
    output logic [IW-1:0] idx_o
);
`ifdef LANE_MAX_SKIP_LAST
    localparam int SEEN = LANES - 1;
`else
    localparam int SEEN = LANES;
`endif
    logic [7:0]    m;
    logic [IW-1:0] k;
    always_comb begin
        m = lanes_i[0];
        k = '0;
        for (int i = 1; i < SEEN; i++) begin
            if (lanes_i[i] > m) begin
                m = lanes_i[i];
                k = IW'(i);
            end
        end
        // An immediate assertion in combinational logic: the maximum bounds every lane.
        if (valid_i && !rst) begin
            a_max_bounds_last_lane: assert (m >= lanes_i[LANES-1]);
        end
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            valid_o <= 1'b0;
            max_o <= '0;
            idx_o <= '0;
        end else begin
            valid_o <= valid_i;
            if (valid_i) begin
                max_o <= m;
                idx_o <= k;
            end
        end
    end
endmodule
